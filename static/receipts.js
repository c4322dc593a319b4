// Receipts: small behaviours the server cannot do. No inline scripts (the CSP forbids them).
"use strict";

// A marked claim in the answer leads to its finding, or to the result that grounds it.
document.addEventListener("click", (event) => {
  const mark = event.target.closest("mark[data-target]");
  if (!mark) return;
  const card = document.getElementById(mark.dataset.target);
  if (card) {
    card.scrollIntoView({ behavior: "smooth", block: "center" });
    card.classList.add("pulse");
    setTimeout(() => card.classList.remove("pulse"), 1200);
  }
});
