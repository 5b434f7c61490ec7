// Console behaviour that needs the browser. Every page works without it.
(function () {
  "use strict";

  // On a phone the navigation folds behind "Menu" (console.css); without this script it
  // stays listed, so every page is still reachable.
  document.documentElement.classList.add("js");
  document.addEventListener("click", function (event) {
    var toggle = event.target.closest && event.target.closest(".menu-toggle");
    if (!toggle) return;
    var bar = toggle.closest(".topbar");
    var open = !bar.classList.contains("open");
    bar.classList.toggle("open", open);
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
  });

  // A card or table that scrolls sideways on a narrow screen can be scrolled from the
  // keyboard too: it takes the focus (and gives it back once it fits again).
  function scrollersFocusable() {
    document.querySelectorAll(".console-page .card, .table-scroll").forEach(function (box) {
      var scrolls = box.scrollWidth > box.clientWidth + 1;
      if (scrolls && !box.hasAttribute("tabindex")) {
        box.setAttribute("tabindex", "0");
        box.setAttribute("data-scroll-focus", "");
      } else if (!scrolls && box.hasAttribute("data-scroll-focus")) {
        box.removeAttribute("tabindex");
        box.removeAttribute("data-scroll-focus");
      }
    });
  }
  document.addEventListener("DOMContentLoaded", scrollersFocusable);
  document.addEventListener("htmx:afterSettle", scrollersFocusable);
  window.addEventListener("resize", scrollersFocusable);

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
        ? kept + " pass the threshold of " + threshold.toFixed(2) +
          ": release the slider to see whether a sentence of them answers the question."
        : "None passed the threshold of " + threshold.toFixed(2) + ": the assistant says it doesn't know.";
      verdict.classList.toggle("refuses", kept === 0);
    }
  }

  // The answer on the page was written at the threshold it was asked with: while the slider
  // is elsewhere it says so, and releasing the slider asks again, so the summary and the
  // answer always speak of the same threshold.
  function markStale(threshold) {
    var card = document.querySelector("[data-answer-threshold]");
    if (!card) return;
    var stale = Math.abs(parseFloat(card.getAttribute("data-answer-threshold")) - threshold) > 1e-9;
    var note = card.querySelector("[data-stale-note]");
    if (note) note.hidden = !stale;
    card.classList.toggle("stale", stale);
  }

  document.addEventListener("input", function (event) {
    if (!event.target.matches("[data-threshold-slider]")) return;
    var threshold = parseFloat(event.target.value);
    refilter(threshold);
    markStale(threshold);
  });
  document.addEventListener("change", function (event) {
    if (!event.target.matches("[data-threshold-slider]")) return;
    var form = event.target.form;
    var asked = form && form.querySelector("[name=question]");
    if (asked && asked.value.trim() && window.htmx) window.htmx.trigger(form, "submit");
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
    source.addEventListener("waiting", function (event) {
      var f = JSON.parse(event.data), ahead = Number(f.ahead), read = Number(f.read);
      text.textContent = ahead > 0 ? "Waiting for the model: " + ahead + " question(s) ahead\u2026"
        : "The model is reading the passages (" + Math.round(read * 100) + "%)\u2026";
      text.setAttribute("data-waiting", "true");
    });
    // A model's written answer follows the quote, as in the widget: it streams below it.
    source.addEventListener("written", function () {
      var below = document.createElement("p");
      below.className = "written";
      box.insertBefore(below, text.nextSibling);
      text = below;
    });
    source.addEventListener("token", function (event) {
      if (text.hasAttribute("data-waiting")) { text.textContent = ""; text.removeAttribute("data-waiting"); }
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

// Copy buttons: `data-copy` holds the text, `data-copy-from` names the field to copy. The
// clipboard API needs a secure context (https or localhost); elsewhere the text is selected
// for the usual keyboard copy.
(function () {
  "use strict";
  function say(button, text) {
    var status = button.closest("div, section") && button.closest("div, section").querySelector("[data-copy-status]");
    var label = button.getAttribute("data-label") || button.textContent;
    button.setAttribute("data-label", label);
    // One place says it: the status line when the button has one, else the button itself.
    if (status) status.textContent = text; else button.textContent = text;
    setTimeout(function () { button.textContent = label; if (status) status.textContent = ""; }, 2000);
  }
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-copy], [data-copy-from]");
    if (!button) return;
    var field = button.hasAttribute("data-copy-from") ? document.querySelector(button.getAttribute("data-copy-from")) : null;
    var text = field ? field.value : button.getAttribute("data-copy");
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(
        function () { say(button, "Copied"); },
        function () { say(button, "Press Ctrl+C to copy"); }
      );
    } else {
      if (field) { field.focus(); field.select(); }
      say(button, field ? "Selected: press Ctrl+C" : "Copy it by hand");
    }
  });
})();
