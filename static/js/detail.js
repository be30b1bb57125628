// Event detail: when a rule/finding link jumps to a highlight (#rule-0-before), flash every
// piece of that highlight. The jump itself is a plain fragment link and works without JS.
(function () {
  "use strict";
  function flash() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    if (!/^(rule|finding)-[0-9a-z-]+$/.test(id)) return;
    var pieces = document.getElementsByClassName("k-" + id);
    for (var i = 0; i < pieces.length; i++) {
      var el = pieces[i];
      el.classList.remove("flash");
      void el.offsetWidth; // restart the animation
      el.classList.add("flash");
    }
  }
  window.addEventListener("hashchange", flash);
  document.addEventListener("DOMContentLoaded", flash);
})();
