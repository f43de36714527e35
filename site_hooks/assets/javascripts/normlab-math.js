// Typeset the maths that pymdownx.arithmatex (generic mode) leaves in .arithmatex elements,
// with the KaTeX copy the build hook vendored (no CDN). Runs on every page Material shows.
document$.subscribe(function () {
  document.querySelectorAll(".arithmatex").forEach(function (element) {
    renderMathInElement(element, {
      delimiters: [
        { left: "\\(", right: "\\)", display: false },
        { left: "\\[", right: "\\]", display: true }
      ],
      throwOnError: false
    });
  });
});
