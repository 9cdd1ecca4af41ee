// The review page's filter (inlined by page.py): "#rejected" or "#rejected,truncated" shows
// only blocks of those statuses; "#all", "#block-N" or no fragment shows every block.
(function () {
  var blocks = Array.prototype.slice.call(document.querySelectorAll("section.block"));
  var links = Array.prototype.slice.call(document.querySelectorAll("a.count"));
  var statuses = links.map(function (a) { return a.getAttribute("data-status"); })
    .filter(function (s) { return s !== "all"; });
  var shown = document.getElementById("shown");
  function apply() {
    var parts = decodeURIComponent(location.hash.slice(1)).split(",");
    var want = parts.filter(function (s) { return statuses.indexOf(s) >= 0; });
    var count = 0;
    blocks.forEach(function (b) {
      b.hidden = want.length > 0 && want.indexOf(b.getAttribute("data-status")) < 0;
      if (!b.hidden) { count += 1; }
    });
    document.body.setAttribute("data-filter", want.length ? want.join(",") : "all");
    links.forEach(function (a) {
      var s = a.getAttribute("data-status");
      var on = want.length ? want.indexOf(s) >= 0 : s === "all";
      a.setAttribute("aria-current", on ? "true" : "false");
    });
    shown.textContent = "Showing " + count + " of " + blocks.length + " blocks" +
      (want.length ? " (" + want.join(", ") + ")" : "") + ".";
  }
  window.addEventListener("hashchange", apply);
  apply();
})();
