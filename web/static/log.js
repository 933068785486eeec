// The log page: follow a running job's output (server-sent events from
// /jobs/ID/log/follow) and append it, keeping at most 1 MiB on the page.
(function () {
  "use strict";
  var pre = document.getElementById("log");
  if (!pre || pre.dataset.done === "true" || !window.EventSource) return;
  var keep = 1 << 20;
  var url = "/jobs/" + pre.dataset.jobId + "/log/follow?offset=" + pre.dataset.offset +
    (pre.dataset.stream === "stderr" ? "&err=1" : "");
  var es = new EventSource(url);
  es.addEventListener("output", function (e) {
    var atEnd = window.innerHeight + window.scrollY >= document.body.scrollHeight - 4;
    var text = pre.textContent + JSON.parse(e.data);
    if (text.length > keep) text = text.slice(text.length - keep);
    pre.textContent = text;
    if (atEnd) window.scrollTo(0, document.body.scrollHeight);
  });
  function stop(e) {
    es.close();
    pre.dataset.done = "true";
    var st = document.querySelector(".logmeta .state");
    if (st && e.data) st.textContent = e.type === "done" ? e.data : "stopped: " + JSON.parse(e.data);
  }
  es.addEventListener("done", stop);
  es.onerror = function () { // a lost stream would resume from the old offset: stop instead
    es.close();
    var st = document.querySelector(".logmeta .state");
    if (st && pre.dataset.done !== "true") st.textContent += " (no longer following: reload to go on)";
  };
  es.addEventListener("failed", stop);
})();
