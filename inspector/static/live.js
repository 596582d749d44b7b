// Live updates of a thread's page: one EventSource on the thread's
// commits; on each, the page's #live region is fetched again and swapped
// in (the server renders and escapes it), so nothing polls and nothing
// reloads. The stream closes with the page.
(function () {
  "use strict";
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
        if (fresh && cur) { cur.replaceWith(document.importNode(fresh, true)); }
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
