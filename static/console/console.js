// Console behaviour that needs the browser. Every page works without it.
(function () {
  "use strict";

  // Times are shown in the viewer's zone: the server reads it from this cookie.
  try {
    var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (zone && document.cookie.indexOf("tz=" + encodeURIComponent(zone)) === -1) {
      document.cookie = "tz=" + encodeURIComponent(zone) + "; path=/admin/; SameSite=Lax";
    }
  } catch (e) { /* old browser: UTC */ }

  // A support source's form shows the fields of the chosen provider only (Discord, Intercom
  // or an import); the server accepts and checks the same fields either way.
  function showProviderFields() {
    var select = document.querySelector('select[name="provider"]');
    if (!select) return;
    document.querySelectorAll("[data-providers]").forEach(function (box) {
      var mine = box.getAttribute("data-providers").split(" ").indexOf(select.value) !== -1;
      box.hidden = !mine;
    });
  }
  document.addEventListener("change", function (event) {
    if (event.target.matches && event.target.matches('select[name="provider"]')) showProviderFields();
  });
  document.addEventListener("DOMContentLoaded", showProviderFields);

  // The sandbox's threshold slider re-filters the candidates already on the page: the same
  // gate as the server (relevance >= threshold, best first, at most max-kept).
  function refilter(threshold) {
    var out = document.getElementById("threshold-value");
    if (out) out.textContent = threshold.toFixed(2);
    var box = document.querySelector("[data-candidates]");
    if (!box) return;
    var maxKept = parseInt(box.getAttribute("data-max-kept"), 10) || 5;
    var kept = 0;
    box.querySelectorAll("tbody tr[data-relevance]").forEach(function (row) {
      var raw = row.getAttribute("data-relevance");
      var passes = raw !== "" && parseFloat(raw) >= threshold && kept < maxKept;
      if (passes) kept += 1;
      row.classList.toggle("kept", passes);
      row.classList.toggle("dropped", !passes);
      var cell = row.querySelector("[data-passed]");
      var label = passes ? "kept" : raw === "" ? "not reranked" : "below";
      if (cell) cell.innerHTML = '<span class="pill' + (passes ? " ok" : "") + '">' + label + "</span>";
    });
    var verdict = box.querySelector("[data-verdict]");
    if (verdict) {
      verdict.textContent = kept
        ? kept + " passed the threshold of " + threshold.toFixed(2) + ": the assistant answers from them."
        : "None passed the threshold of " + threshold.toFixed(2) + ": the assistant says it doesn't know.";
      verdict.classList.toggle("refuses", kept === 0);
    }
  }

  document.addEventListener("input", function (event) {
    if (event.target.matches("[data-threshold-slider]")) refilter(parseFloat(event.target.value));
  });
})();

// The sandbox's answer streams in over server-sent events; `done` carries the answer rendered
// from Markdown and sanitised by the server, which replaces the plain text shown so far.
(function () {
  "use strict";
  function stream(box) {
    var url = box.getAttribute("data-answer-stream");
    box.removeAttribute("data-answer-stream");
    var text = document.createElement("p");
    box.insertBefore(text, box.firstChild);
    var source = new EventSource(url);
    function finish() {
      source.close();
      box.classList.remove("streaming");
      box.setAttribute("aria-busy", "false");
      var cursor = box.querySelector(".cursor");
      if (cursor) cursor.remove();
    }
    source.addEventListener("token", function (event) {
      text.textContent += JSON.parse(event.data).text;
    });
    source.addEventListener("done", function (event) {
      box.innerHTML = JSON.parse(event.data).html;
      box.setAttribute("data-streamed", "true");
      finish();
    });
    source.addEventListener("error", function (event) {
      var message = "The answer could not be streamed; ask again.";
      try { message = JSON.parse(event.data).message; } catch (e) { /* a dropped connection */ }
      var note = document.createElement("p");
      note.className = "error";
      note.textContent = message;
      box.appendChild(note);
      finish();
    });
  }
  function scan(root) {
    (root || document).querySelectorAll("[data-answer-stream]").forEach(stream);
  }
  document.addEventListener("DOMContentLoaded", function () { scan(document); });
  document.addEventListener("htmx:afterSettle", function (event) { scan(event.target); });
})();
