// The browser terminal: xterm.js on the session's websocket (terminal.go).
// Keystrokes and pasted text go as binary messages, the window size as a
// JSON text message; the output comes back as binary messages. The
// element #terminal says where it stands in data-status: "connecting",
// "open", "closed".
(function () {
  "use strict";
  var el = document.getElementById("terminal");
  var label = document.getElementById("terminal-state");
  function status(s, text) {
    el.dataset.status = s;
    label.textContent = text || s;
    label.classList.toggle("closed", s === "closed");
  }
  if (!window.Terminal || !window.FitAddon) {
    status("closed", "the terminal's scripts did not load (run make web-assets and rebuild the controller)");
    return;
  }
  var term = new Terminal({ cursorBlink: true, scrollback: 5000 });
  var fit = new FitAddon.FitAddon();
  term.loadAddon(fit);
  term.open(el);
  fit.fit();

  var scheme = location.protocol === "https:" ? "wss:" : "ws:";
  var ws = new WebSocket(scheme + "//" + location.host + "/jobs/" + el.dataset.jobId + "/terminal/ws");
  ws.binaryType = "arraybuffer";
  var utf8 = new TextEncoder();
  var chunk = 16384; // the server takes at most 1 MiB a message: a long paste goes in pieces

  function send(bytes) {
    if (ws.readyState !== WebSocket.OPEN) return;
    for (var i = 0; i < bytes.length; i += chunk) ws.send(bytes.subarray(i, i + chunk));
  }
  function sendSize() {
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ rows: term.rows, cols: term.cols }));
  }
  ws.onopen = function () {
    status("open", "connected");
    sendSize();
    term.focus();
  };
  ws.onmessage = function (e) { term.write(new Uint8Array(e.data)); };
  ws.onclose = function (e) {
    var why = e.reason || (e.code === 1000 ? "closed" : "the connection was refused or lost (code " + e.code + ")");
    status("closed", why);
    term.write("\r\n[" + why + "]\r\n");
  };
  term.onData(function (d) { send(utf8.encode(d)); });
  term.onBinary(function (d) { // mouse reports: one byte per character
    var b = new Uint8Array(d.length);
    for (var i = 0; i < d.length; i++) b[i] = d.charCodeAt(i) & 255;
    send(b);
  });
  term.onResize(sendSize);
  window.addEventListener("resize", function () { fit.fit(); });
})();
