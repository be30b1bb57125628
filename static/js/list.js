// Event list: leave empty filters out of the htmx request, so the address bar that
// hx-push-url fills reads "?verdict=fail" rather than "?project=&session=&verdict=fail&strategy=".
(function () {
  "use strict";
  document.addEventListener("htmx:configRequest", function (e) {
    var elt = e.detail.elt;
    if (!elt.classList || !elt.classList.contains("filters")) return;
    var fd = e.detail.formData;
    var empty = [];
    fd.forEach(function (value, key) { if (value === "") empty.push(key); });
    empty.forEach(function (key) { fd.delete(key); });
  });
})();
