// The launch dialog: a resource template sets the sliders; moving a
// slider afterwards makes the choice "custom" again.
(function () {
  "use strict";
  var form = document.querySelector("main.launch form");
  if (!form) return;
  function set(name, value) {
    var el = form.elements[name];
    if (!el || value === undefined) return;
    el.value = value;
    var o = el.nextElementSibling;
    if (o && o.tagName === "OUTPUT") o.textContent = value;
  }
  form.addEventListener("change", function (e) {
    var t = e.target;
    if (t.name === "template" && t.checked && t.value) {
      set("cpus", t.dataset.cpus);
      set("mem_mib", t.dataset.memMib);
      set("shm_mib", t.dataset.shmMib);
      set("fgpu", t.dataset.fgpu);
    }
  });
  form.addEventListener("input", function (e) {
    if (["cpus", "mem_mib", "shm_mib", "fgpu"].indexOf(e.target.name) < 0) return;
    var custom = form.querySelector('input[name="template"][value=""]');
    if (custom) custom.checked = true;
  });
})();
