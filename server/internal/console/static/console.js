// plasmd console: the only script. It records CSP violations on <body>
// (so a browser test can fail on them) and streams live activity over SSE
// into the activity page. Rows are built with textContent, never innerHTML.
"use strict";
document.addEventListener("securitypolicyviolation", function (e) {
  var b = document.body || document.documentElement;
  var n = Number(b.getAttribute("data-csp-violations") || "0") + 1;
  b.setAttribute("data-csp-violations", String(n));
  b.setAttribute("data-csp-last", e.violatedDirective + " " + e.blockedURI);
});
document.addEventListener("DOMContentLoaded", function () {
  var table = document.getElementById("live");
  if (!table || !window.EventSource) { return; }
  var body = table.tBodies[0];
  var events = document.getElementById("events");
  var src = new EventSource("/ui/events");
  function cell(tr, text, href) {
    var td = document.createElement("td");
    if (href) {
      var a = document.createElement("a");
      a.href = href;
      a.textContent = text;
      td.appendChild(a);
    } else {
      td.textContent = text;
    }
    tr.appendChild(td);
  }
  src.addEventListener("run", function (m) {
    var e = JSON.parse(m.data);
    var tr = document.createElement("tr");
    tr.className = e.status;
    cell(tr, e.at, e.href);
    cell(tr, e.tenant || "");
    cell(tr, "session", e.session);
    cell(tr, e.text);
    cell(tr, e.status);
    cell(tr, "");
    body.insertBefore(tr, body.firstChild);
    while (body.rows.length > 50) { body.deleteRow(-1); }
  });
  function note(m) {
    var e = JSON.parse(m.data);
    var li = document.createElement("li");
    li.textContent = e.at + " " + e.kind + " " + e.text + (e.tenant ? " (" + e.tenant + ")" : "");
    events.insertBefore(li, events.firstChild);
  }
  src.addEventListener("fault", note);
  src.addEventListener("invalidation", note);
});
