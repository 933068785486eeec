// Live updates: when the controller's jobs change, re-read this page and
// put its indicator and sessions in place of the old ones.
(function () {
  "use strict";
  // A page that is being filled in or streams its own content opts out.
  if (!window.EventSource || document.querySelector("main[data-live=off]")) return;
  var busy = false, again = false;
  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        ["section.indicator", "main"].forEach(function (sel) {
          var fresh = doc.querySelector(sel), old = document.querySelector(sel);
          if (fresh && old) old.replaceWith(fresh);
        });
      })
      .catch(function () {})
      .finally(function () {
        busy = false;
        if (again) { again = false; refresh(); }
      });
  }
  // The version the page was read at: a change published before this
  // listens is told at once.
  var main = document.querySelector("main[data-version]");
  var since = main ? "?since=" + encodeURIComponent(main.dataset.version) : "";
  new EventSource("/events" + since).addEventListener("changed", refresh);
})();

// A slider shows its value in the <output> after it.
document.addEventListener("input", function (e) {
  var t = e.target, o = t && t.nextElementSibling;
  if (t && t.type === "range" && o && o.tagName === "OUTPUT") o.textContent = t.value;
});
