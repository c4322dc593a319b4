// Receipts: small behaviours the server cannot do. No inline scripts (the CSP forbids them).
"use strict";

// A marked claim in the answer leads to its finding on the right.
document.addEventListener("click", (event) => {
  const mark = event.target.closest("mark[data-finding]");
  if (!mark) return;
  const card = document.getElementById(mark.dataset.finding);
  if (card) {
    card.scrollIntoView({ behavior: "smooth", block: "center" });
    card.classList.add("pulse");
    setTimeout(() => card.classList.remove("pulse"), 1200);
  }
});
