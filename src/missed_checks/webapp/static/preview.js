// The checklist form's live preview (#32): as the person types, the form is posted to
// /checklists/preview (as its "Preview" button does) and the answer's preview section replaces this
// page's. Without this script the button does the same with a whole page. Nothing is saved.
(function () {
  "use strict";
  var form = document.getElementById("checklist-form");
  var section = document.getElementById("preview");
  if (!form || !section || !window.fetch || !window.DOMParser) {
    return;
  }
  var timer = null;
  var sent = 0;

  function refresh() {
    var number = ++sent;
    var body = new URLSearchParams(new FormData(form));
    fetch("/checklists/preview", {
      method: "POST",
      body: body,
      credentials: "same-origin",
      headers: { "Content-Type": "application/x-www-form-urlencoded" }
    }).then(function (answer) {
      return answer.text();
    }).then(function (html) {
      if (number !== sent) {
        return; // a later edit's answer is on its way
      }
      var page = new DOMParser().parseFromString(html, "text/html");
      var fresh = page.getElementById("preview");
      if (fresh) {
        section.replaceChildren.apply(section, Array.prototype.slice.call(fresh.childNodes));
      }
    }).catch(function () {
      // offline or signed out: the Preview button still works
    });
  }

  function later() {
    window.clearTimeout(timer);
    timer = window.setTimeout(refresh, 400);
  }

  form.addEventListener("input", later);
  form.addEventListener("change", later);
}());
