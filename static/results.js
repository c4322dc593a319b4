// Tool results on the turn page: choosing a claim (or a link to a span) opens the way to
// the span of the result that grounds it, scrolls it into view and highlights it. The
// folding itself is <details>, and the parts of a long result load through htmx.
"use strict";

(() => {
  // Opens every node around the span (and puts a table view back to the tree it hides).
  function openAround(span) {
    for (let node = span.parentElement; node; node = node.parentElement) {
      if (node.tagName !== "DETAILS") continue;
      node.open = true;
      const table = node.querySelector(":scope > .rt-tableview[open]");
      if (table) table.open = false;
    }
  }

  function reveal(span) {
    openAround(span);
    for (const old of document.querySelectorAll("mark.rt-chosen")) old.classList.remove("rt-chosen");
    span.classList.add("rt-chosen");
    span.scrollIntoView({ block: "center", inline: "nearest" });
  }

  // A claim's span: in its finding's own evidence when the card shows it, else where the
  // result stands in the conversation.
  function spanFor(target) {
    const spans = Array.from(document.querySelectorAll("mark.rt-span[data-for]")).filter((mark) =>
      mark.dataset.for.split(" ").includes(target),
    );
    const card = document.getElementById(target);
    return spans.find((mark) => card && card.contains(mark)) || spans[0] || null;
  }

  function choose(element) {
    const claim = element.closest("mark[data-target]");
    if (claim) {
      const span = spanFor(claim.dataset.target);
      if (span) reveal(span);
      return !!span;
    }
    const link = element.closest("a[data-reveal]");
    const span = link && document.getElementById(link.dataset.reveal);
    if (span) reveal(span);
    return !!span;
  }

  document.addEventListener("click", (event) => {
    if (choose(event.target) && event.target.closest("a[data-reveal]")) event.preventDefault();
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && event.target.matches && event.target.matches("mark[data-target]")) {
      choose(event.target);
    }
  });
  // Each finding's evidence shows its span in its own box from the start, however far down
  // the result it lies: the box scrolls, the page does not.
  function centreInBox(span) {
    const box = span.closest(".rt");
    if (!box) return;
    const offset = span.getBoundingClientRect().top - box.getBoundingClientRect().top;
    box.scrollTop += offset - box.clientHeight / 2;
  }
  for (const box of document.querySelectorAll("[data-finding] .rt")) {
    const span = box.querySelector("mark.rt-span");
    if (span) centreInBox(span);
  }

  // A link to a span from elsewhere (#rt-…) opens the way to it on arrival.
  const arrived = location.hash.startsWith("#rt-") && document.getElementById(location.hash.slice(1));
  if (arrived) reveal(arrived);
})();
