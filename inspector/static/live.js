// Times in the viewer's zone: each <time> (written in UTC) gets its
// local time as a title, shown on hover.
//
// Live updates of a thread's page: one EventSource on the thread's
// commits; on each, the page's #live region is fetched again and swapped
// in (the server renders and escapes it), so nothing polls and nothing
// reloads. The stream closes with the page.
(function () {
  "use strict";
  function localTimes() {
    document.querySelectorAll("time[datetime]").forEach(function (t) {
      var d = new Date(t.getAttribute("datetime").replace(" ", "T"));
      if (!isNaN(d.getTime())) { t.title = d.toLocaleString() + " (your time)"; }
    });
  }
  localTimes();
  var meta = document.querySelector('meta[name="satchel-live"]');
  if (!meta || !window.EventSource) { return; }
  var status = document.getElementById("live-status");
  var es = new EventSource(meta.content);
  var busy = false, again = false;
  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.getElementById("live"), cur = document.getElementById("live");
        if (fresh && cur) { cur.replaceWith(document.importNode(fresh, true)); localTimes(); }
      })
      .catch(function () {})
      .then(function () {
        busy = false;
        if (again) { again = false; refresh(); }
      });
  }
  es.addEventListener("commit", function (e) {
    var c;
    try { c = JSON.parse(e.data); } catch (err) { return; }
    if (status) { status.textContent = "Commit " + c.seq + " arrived: " + c.summary; }
    refresh();
  });
  es.addEventListener("signed-out", function () {
    es.close();
    if (status) { status.textContent = "Live updates stopped: sign in again."; }
  });
  es.onopen = function () { document.documentElement.setAttribute("data-live", "open"); };
  es.onerror = function () {
    if (status && es.readyState === EventSource.CLOSED) { status.textContent = "Live updates stopped."; }
  };
  window.addEventListener("pagehide", function () { es.close(); });
})();
