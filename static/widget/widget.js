/*! Ask AI widget: one script tag, no framework, no CDN.
 *
 *  <script src="https://HOST/static/widget/widget.js" data-project="pk_..."
 *          data-topic="Billing" data-question="How do I get my money back?" async></script>
 *
 *  Optional: data-title, data-color (#hex), data-position (right | left),
 *  data-transport (auto | ws | sse), data-theme (auto | light | dark).
 *  JavaScript API: AskAI.open(), AskAI.close(),
 *  AskAI.setTopic(topic, question?), AskAI.ask(question?).
 */
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script || window.AskAI) return;

  var data = script.dataset;
  var server = new URL(script.src, location.href);
  var cfg = {
    project: data.project || "",
    topic: data.topic || "",
    question: data.question || "",
    title: data.title || "Ask AI",
    color: /^#[0-9a-f]{3,8}$/i.test(data.color || "") ? data.color : "#3b5bdb",
    left: data.position === "left",
    transport: data.transport || "auto",
    theme: /^(light|dark)$/.test(data.theme || "") ? data.theme : "auto",
    userId: data.userId || "",
    userHash: data.userHash || "",
    http: server.origin,
    ws: (server.protocol === "https:" ? "wss://" : "ws://") + server.host,
  };
  var SORRY = "I'm sorry, I couldn't find an answer to your question.";

  // ---- Safe Markdown: DOM nodes and text only, never innerHTML --------------------------------
  // A link's URL may hold balanced parentheses (Wikipedia's do; so does javascript:alert(1),
  // whose link is dropped whole, not up to its first ")").
  var INLINE = /(`+)([^`]+?)\1|!\[([^\]]*)\]\(((?:[^()\s]|\([^()\s]*\))*)\)|\[([^\]]+)\]\(((?:[^()\s]|\([^()\s]*\))+)\)|\*\*(.+?)\*\*|__(.+?)__|\*([^*\s](?:.*?[^*\s])?)\*|(https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"])|\[(\d{1,2})\](?!\()/;
  var citing = []; // the sources of the answer being rendered: [n] markers point at them

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text != null) node.textContent = text;
    return node;
  }

  function safeLink(href, label) {
    var a = el("a");
    try {
      var url = new URL(href);
      if (url.protocol !== "http:" && url.protocol !== "https:") return null;
      a.href = url.href;
    } catch (e) {
      return null;
    }
    a.target = "_blank";
    a.rel = "noopener noreferrer";
    inline(a, label);
    return a;
  }

  function inline(parent, text) {
    var m;
    while ((m = INLINE.exec(text))) {
      if (m.index) parent.appendChild(document.createTextNode(text.slice(0, m.index)));
      if (m[2] != null) parent.appendChild(el("code", "", m[2]));
      else if (m[4] != null) parent.appendChild(document.createTextNode(m[3])); // no images
      else if (m[6] != null) parent.appendChild(safeLink(m[6], m[5]) || document.createTextNode(m[5]));
      else if (m[7] != null || m[8] != null) inline(parent.appendChild(el("strong")), m[7] || m[8]);
      else if (m[9] != null) inline(parent.appendChild(el("em")), m[9]);
      else if (m[10] != null) parent.appendChild(safeLink(m[10], m[10]) || document.createTextNode(m[10]));
      else parent.appendChild(cite(+m[11]));
      text = text.slice(m.index + m[0].length);
    }
    if (text) parent.appendChild(document.createTextNode(text));
  }

  // A citation marker [n]: a link to source n (http/https only), or, for a source without a
  // link (an uploaded document), the marker with the document's title, marked as such.
  function cite(n) {
    var source = citing[n - 1], marker = "[" + n + "]";
    if (!source) return document.createTextNode(marker);
    var link = safeLink(source.url, "");
    var node = link || el("span", "doc");
    node.textContent = marker;
    node.className = link ? "cite" : "cite doc";
    node.title = (source.title || "Source " + n) + (link ? "" : " (a document without a link)");
    node.setAttribute("aria-label", "Source " + n + ": " + node.title);
    return node;
  }

  // A code block with a Copy button (commands are meant to be pasted, not retyped).
  function codeBlock(root) {
    var box = root.appendChild(el("div", "code"));
    var code = box.appendChild(el("pre")).appendChild(el("code"));
    var copy = box.appendChild(el("button", "copy", "Copy"));
    copy.type = "button";
    copy.setAttribute("aria-label", "Copy code");
    copy.addEventListener("click", function () {
      var done = function () {
        copy.textContent = "Copied";
        setTimeout(function () { copy.textContent = "Copy"; }, 2000);
      };
      if (navigator.clipboard) navigator.clipboard.writeText(code.textContent).then(done, function () {});
    });
    return code;
  }

  function markdown(text, sources) {
    citing = sources || [];
    var root = document.createDocumentFragment();
    var lines = text.replace(/\r\n?/g, "\n").split("\n");
    var para = [], list = null, code = null;
    function flush() {
      if (para.length) inline(root.appendChild(el("p")), para.join(" "));
      para = [];
      list = null;
    }
    lines.forEach(function (line) {
      var m;
      if (code) {
        if (/^\s*```/.test(line)) code = null;
        else code.textContent += (code.textContent ? "\n" : "") + line;
        return;
      }
      if (/^\s*```/.test(line)) {
        flush();
        code = codeBlock(root);
      } else if ((m = /^\s*(?:([-*+])|(\d+)[.)])\s+(.*)$/.exec(line))) {
        if (para.length) flush();
        var tag = m[1] ? "ul" : "ol";
        if (!list || list.tagName.toLowerCase() !== tag) list = root.appendChild(el(tag));
        inline(list.appendChild(el("li")), m[3]);
      } else if ((m = /^\s*(#{1,6})\s+(.*)$/.exec(line))) {
        flush();
        inline(root.appendChild(el("p", "heading")), m[2]);
      } else if (!line.trim()) {
        flush();
      } else if (list && /^\s{2,}\S/.test(line)) {
        inline(list.lastChild, " " + line.trim());
      } else {
        list = null;
        para.push(line.trim().replace(/^>\s?/, ""));
      }
    });
    flush();
    return root;
  }

  // ---- Look -----------------------------------------------------------------------------------
  // Colours are variables: the light set here, the dark one for data-theme="dark" and, with
  // "auto" (the default), for readers whose system prefers dark.
  var DARK = "--bg:#17191f;--fg:#e6e8ee;--muted:#a3aabb;--line:#3a3f4c;--soft:#262a35;--code:#2b303c;--err:#ff9b9b;--link:#9db4ff;";
  var CSS =
    ":host{all:initial}*{box-sizing:border-box}" +
    ".w{--bg:#fff;--fg:#1d2433;--muted:#5b6478;--line:#d9dce6;--soft:#eef1fb;--code:#eef0f6;--err:#a61e1e;--link:var(--c);" +
    "font:15px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:var(--fg);position:fixed;bottom:20px;z-index:2147483000;" +
    (cfg.left ? "left:20px" : "right:20px") + "}" +
    ".w.dark{" + DARK + "}" +
    "button,textarea,input{font:inherit;color:inherit}input::placeholder,textarea::placeholder{color:var(--muted)}" +
    ".launch{background:var(--c);color:#fff;border:0;border-radius:999px;padding:12px 20px;font-weight:600;cursor:pointer;box-shadow:0 4px 14px rgba(0,0,0,.2)}" +
    ".panel{position:absolute;bottom:60px;" + (cfg.left ? "left:0" : "right:0") +
    ";width:380px;max-width:calc(100vw - 24px);height:560px;max-height:calc(100vh - 100px);background:var(--bg);border:1px solid var(--line);border-radius:14px;box-shadow:0 12px 40px rgba(0,0,0,.22);display:flex;flex-direction:column;overflow:hidden}" +
    ".panel[hidden],.launch[hidden]{display:none}.open .panel{bottom:0;max-height:calc(100vh - 40px)}" +
    "header{display:flex;align-items:center;gap:8px;padding:12px 14px;background:var(--c);color:#fff}" +
    "h2{font-size:16px;margin:0;flex:1}header small{display:block;font-weight:400;opacity:.85;font-size:12px}" +
    ".new{background:transparent;border:1px solid rgba(255,255,255,.7);color:#fff;font-size:12px;cursor:pointer;padding:3px 8px;border-radius:6px}" +
    ".x{background:transparent;border:0;color:#fff;font-size:22px;line-height:1;cursor:pointer;padding:2px 8px;border-radius:6px}" +
    ".log{flex:1;overflow-y:auto;padding:12px 14px}" +
    ".q{background:var(--soft);border-radius:10px;padding:8px 10px;margin:10px 0 6px auto;max-width:90%;width:fit-content;white-space:pre-wrap;overflow-wrap:anywhere}" +
    ".a{margin:6px 0 14px;overflow-wrap:anywhere}.a p{margin:0 0 8px}.a .heading{font-weight:700}" +
    ".a ul,.a ol{margin:0 0 8px;padding-left:22px}.a code{background:var(--code);border-radius:4px;padding:0 4px;font-size:13px}" +
    ".a .code{position:relative;margin:0 0 8px}.a pre{background:var(--code);padding:30px 8px 8px;border-radius:6px;overflow-x:auto;margin:0}.a pre code{padding:0}" +
    ".copy{position:absolute;top:4px;right:4px;font-size:12px;background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:2px 8px;cursor:pointer}" +
    ".a a{color:var(--link)}.refused .md{color:var(--muted);font-style:italic}" +
    ".src{font-size:13px;margin:6px 0 0;padding-left:20px;color:var(--muted)}" +
    ".team{font-size:12px;font-weight:600;margin:0 0 4px;color:var(--link)}" +
    ".related{font-size:13px;margin:6px 0 0}.related p{margin:0;font-weight:600}.related ul{margin:2px 0 0;padding-left:20px}" +
    ".person{margin-top:8px;font-size:13px}.person form{display:flex;flex-wrap:wrap;gap:6px;align-items:center}" +
    ".person input{flex:1;min-width:150px;border:1px solid var(--line);border-radius:8px;padding:4px 8px;background:var(--bg)}" +
    ".person p{margin:0 0 4px;color:var(--muted)}.person .done{color:var(--fg)}" +
    ".topic{display:flex;align-items:center;gap:8px;margin:14px 0 6px;font-size:12px;color:var(--muted)}.topic:before,.topic:after{content:'';flex:1;border-top:1px solid var(--line)}" +
    ".cite{font-size:12px;vertical-align:super;text-decoration:none;margin-left:1px}.cite.doc{color:var(--muted);cursor:help}" +
    ".fb{display:flex;flex-wrap:wrap;gap:6px;align-items:center;margin-top:6px;font-size:13px;color:var(--muted)}" +
    ".fb button,.retry,.person button,.person a.btn{background:var(--bg);border:1px solid var(--line);border-radius:8px;padding:3px 10px;cursor:pointer;line-height:0}.retry,.person button,.person a.btn{line-height:1.5}" +
    ".person a.btn{display:inline-block;color:var(--fg);text-decoration:none}" +
    ".hint{color:var(--muted);font-size:14px;margin:4px 0}" +
    ".chips{list-style:none;margin:6px 0 10px;padding:0;display:flex;flex-wrap:wrap;gap:6px}" +
    ".chips[hidden]{display:none}" +
    ".chip{border:1px solid var(--line);background:var(--bg);color:var(--fg);border-radius:999px;" +
    "padding:5px 11px;font:inherit;font-size:13px;cursor:pointer;text-align:left}" +
    ".chip:hover,.chip:focus-visible{border-color:var(--c);background:var(--soft)}" +
    ".fb button[aria-pressed=true]{border-color:var(--c);background:var(--soft)}" +
    ".fb form{display:flex;gap:6px;width:100%;scroll-margin:12px}.fb form button{line-height:1.5}.fb textarea{flex:1;min-height:34px;border:1px solid var(--line);border-radius:8px;padding:4px 8px;background:var(--bg)}" +
    ".err{color:var(--err);margin:6px 0}.a .label{margin:2px 0;font-size:12px;font-weight:600;color:var(--muted)}" +
    ".a .written{margin-top:8px}.a .note{margin:6px 0;font-size:13px;color:var(--muted);font-style:italic}.status{min-height:20px;padding:0 14px;font-size:13px;color:var(--muted)}" +
    "form.ask{display:flex;align-items:flex-end;gap:8px;padding:10px 14px 14px;border-top:1px solid var(--line)}" +
    "form.ask textarea{flex:1;resize:none;border:1px solid var(--line);border-radius:10px;padding:8px 10px;height:44px;max-height:160px;overflow-y:auto;background:var(--bg)}" +
    ".send{background:var(--c);color:#fff;border:0;border-radius:10px;padding:0 16px;height:44px;font-weight:600;cursor:pointer}" +
    ".send:disabled{opacity:.5;cursor:default}" +
    ":focus-visible{outline:3px solid #f59f00;outline-offset:2px}" +
    ".sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}" +
    "@media (max-width:480px){.w{left:8px;right:8px;bottom:8px}.launch{float:right}" +
    ".panel,.open .panel{position:fixed;inset:0;width:100vw;max-width:none;height:100%;max-height:none;border-radius:0}" +
    // Fingers, not pointers: every control at least 44 by 44 CSS pixels (WCAG 2.5.5).
    "button,.chip,.person a.btn,.person input{min-height:44px;min-width:44px}.fb button{line-height:0}" +
    // The [n] markers keep their place in the text: the 44-pixel box overhangs the line.
    ".cite{display:inline-block;min-width:44px;min-height:44px;line-height:44px;text-align:center;margin:-16px -12px;vertical-align:middle}" +
    ".src a,.related a,.src .doc{display:block;min-height:44px;padding:11px 0}" +
    ".copy{top:0;right:0}.a pre{padding-top:50px}}";

  // ---- Build ----------------------------------------------------------------------------------
  var host = document.createElement("ask-ai-widget");
  // Inline !important beats any page rule on the host; inside, the shadow root isolates.
  host.setAttribute("style", "all:initial!important;display:block!important");
  var shadow = host.attachShadow({ mode: "open" });
  var style = el("style", "", CSS);
  shadow.appendChild(style);
  var wrap = shadow.appendChild(el("div", "w " + cfg.theme));
  wrap.style.setProperty("--c", cfg.color);

  // data-theme="auto" follows the host page, not only the system: a page with a dark
  // background gets the dark panel, a light-only page the light one whatever the system says,
  // and a page without a background of its own is dark only where its color-scheme allows it.
  var systemDark = window.matchMedia ? matchMedia("(prefers-color-scheme: dark)") : null;
  function backgroundOf(node) {
    if (!node) return null;
    var rgb = (getComputedStyle(node).backgroundColor.match(/[\d.]+/g) || []).map(Number);
    return rgb.length < 3 || rgb[3] === 0 ? null : rgb;
  }
  function hostIsDark() {
    var bg = backgroundOf(document.body) || backgroundOf(document.documentElement);
    if (bg) return (0.2126 * bg[0] + 0.7152 * bg[1] + 0.0722 * bg[2]) / 255 < 0.5;
    var meta = document.querySelector('meta[name="color-scheme"]');
    var scheme = getComputedStyle(document.documentElement).colorScheme + " " + (meta ? meta.content : "");
    return /\bdark\b/.test(scheme) && !/\bonly light\b/.test(scheme) && !!systemDark && systemDark.matches;
  }
  function applyTheme() {
    if (cfg.theme === "auto") wrap.classList.toggle("dark", hostIsDark());
  }
  if (systemDark && systemDark.addEventListener) systemDark.addEventListener("change", applyTheme);
  // A host page's own dark-mode switch: a class, style or data attribute on <html> or <body>.
  var themeWatch = new MutationObserver(applyTheme);

  var launcher = wrap.appendChild(el("button", "launch", cfg.title));
  launcher.type = "button";
  launcher.setAttribute("aria-haspopup", "dialog");
  launcher.setAttribute("aria-expanded", "false");

  var panel = wrap.appendChild(el("div", "panel"));
  panel.hidden = true;
  panel.setAttribute("role", "dialog");
  panel.setAttribute("aria-modal", "true");
  panel.setAttribute("aria-labelledby", "askai-title");
  var header = panel.appendChild(el("header"));
  var heading = header.appendChild(el("h2", "", cfg.title));
  heading.id = "askai-title";
  var topicLine = heading.appendChild(el("small"));
  var restart = header.appendChild(el("button", "new", "New conversation"));
  restart.type = "button";
  var closer = header.appendChild(el("button", "x", "\u00d7"));
  closer.type = "button";
  closer.setAttribute("aria-label", "Close");
  var log = panel.appendChild(el("div", "log"));
  log.setAttribute("role", "log");
  log.setAttribute("aria-live", "polite");
  log.tabIndex = 0;
  var status = panel.appendChild(el("div", "status"));
  status.setAttribute("role", "status");
  var form = panel.appendChild(el("form", "ask"));
  var label = form.appendChild(el("label", "sr", "Your question"));
  label.htmlFor = "askai-q";
  var input = form.appendChild(el("textarea"));
  input.id = "askai-q";
  input.maxLength = 2000;
  input.rows = 1;
  var send = form.appendChild(el("button", "send", "Ask"));
  send.type = "submit";

  var hint = log.appendChild(el("p", "hint"));
  // Suggested questions, as chips under the hint: the page's own question, then the ones
  // most asked on this topic that were answered well (the server's /api/v1/suggestions).
  var chips = el("ul", "chips");
  chips.setAttribute("aria-label", "Suggested questions");
  hint.after(chips);
  var suggested = [];
  function showChips() {
    var questions = [];
    [cfg.question].concat(suggested).forEach(function (q) {
      q = String(q || "").trim();
      var seen = questions.some(function (x) { return x.toLowerCase() === q.toLowerCase(); });
      if (q && !seen && questions.length < 4) questions.push(q);
    });
    chips.replaceChildren();
    questions.forEach(function (q) {
      var chip = chips.appendChild(el("li")).appendChild(el("button", "chip", q));
      chip.type = "button";
      chip.addEventListener("click", function () { window.AskAI.ask(q); });
    });
  }
  function loadSuggestions() {
    var topic = cfg.topic;
    fetch(cfg.http + "/api/v1/suggestions", {
      method: "POST", credentials: "omit", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ project: cfg.project, topic: topic }),
    })
      .then(function (r) { return r.ok ? r.json() : { questions: [] }; })
      .then(function (body) {
        if (topic !== cfg.topic || !Array.isArray(body.questions)) return;
        suggested = body.questions.filter(function (q) { return typeof q === "string"; });
        showChips();
      })
      .catch(function () { /* no suggestions: the page's own question is enough */ });
  }
  function showTopic() {
    topicLine.textContent = cfg.topic ? "About: " + cfg.topic : "Answers from our documentation";
    hint.textContent = "Ask a question" + (cfg.topic ? " about " + cfg.topic : "") +
      ". Answers come only from our documentation, with their sources.";
    suggested = [];
    showChips();
    if (!panel.hidden) loadSuggestions();
  }
  showTopic();

  // ---- Open, close, keyboard ------------------------------------------------------------------
  // The launcher hides while the panel is open (it would sit under it) and comes back, with
  // the focus, when the panel closes.
  function open() {
    if (!panel.hidden) return input.focus();
    panel.hidden = false;
    launcher.hidden = true;
    wrap.classList.add("open");
    launcher.setAttribute("aria-expanded", "true");
    scrollDown(); // a conversation restored while the panel was hidden: show its latest answer
    if (!suggested.length) loadSuggestions();
    applyTheme();
    // The page's question starts an empty conversation; mid-conversation it would be typed
    // back over and over (it stays a chip of the empty panel).
    if (!input.value && !kept.length) input.value = cfg.question;
    input.focus();
    input.select();
  }
  function close() {
    panel.hidden = true;
    launcher.hidden = false;
    wrap.classList.remove("open");
    launcher.setAttribute("aria-expanded", "false");
    launcher.focus();
  }
  launcher.addEventListener("click", function () {
    panel.hidden ? open() : close();
  });
  closer.addEventListener("click", close);
  panel.addEventListener("keydown", function (e) {
    if (e.key === "Escape") {
      e.preventDefault();
      close();
    } else if (e.key === "Tab") {
      var items = Array.prototype.filter.call(
        panel.querySelectorAll("button,textarea,input,a[href],[tabindex='0']"),
        function (n) { return !n.disabled && n.offsetParent !== null; }
      );
      var first = items[0], last = items[items.length - 1];
      var active = shadow.activeElement;
      if (e.shiftKey && active === first) { e.preventDefault(); last.focus(); }
      else if (!e.shiftKey && active === last) { e.preventDefault(); first.focus(); }
    }
  });
  // The input grows with what is typed, up to about six lines, then scrolls.
  function fitInput() {
    input.style.height = "";
    if (input.scrollHeight > input.clientHeight) input.style.height = Math.min(input.scrollHeight + 2, 160) + "px";
  }
  input.addEventListener("input", fitInput);
  input.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      form.requestSubmit ? form.requestSubmit() : submit();
    }
  });
  form.addEventListener("submit", function (e) {
    e.preventDefault();
    submit();
  });
  function submit() {
    var q = input.value.trim();
    if (q && !current) {
      input.value = "";
      fitInput();
      ask(q);
    }
  }

  // ---- One answer on screen -------------------------------------------------------------------
  var current = null; // the answer being streamed
  var conversation = null;
  var person = null; // what "Ask a person" does ({via, url}), from the server's done frames

  function Answer(question) {
    this.question = question;
    this.text = "";
    this.sources = [];
    log.appendChild(el("div", "q", question));
    this.node = log.appendChild(el("div", "a"));
    this.md = this.node.appendChild(el("div", "md"));
    this.queued = false;
    // With a model that writes: the quote comes first, then the written answer (wtext).
    this.wmd = null;
    this.wtext = "";
    scrollDown();
  }
  Answer.prototype.frame = function (f) {
    if (f.type === "sources") this.sources = f.sources || [];
    else if (f.type === "waiting") setStatus((this.wmd ? "The quote above is from the docs. " : "") + waitingText(f));
    else if (f.type === "written") this.startWriting();
    else if (f.type === "token") {
      if (this.wmd) {
        if (!this.wtext) { setStatus(""); this.wmd.hidden = false; }
        this.wtext += f.text;
      } else {
        if (!this.text) setStatus("");
        this.text += f.text;
      }
      this.paint();
    } else if (f.type === "done") this.done(f);
    else if (f.type === "error") this.fail(f);
  };
  Answer.prototype.paint = function () {
    var self = this;
    if (self.queued) return;
    self.queued = true;
    requestAnimationFrame(function () {
      self.queued = false;
      self.md.replaceChildren(markdown(self.text, self.sources));
      if (self.wmd) self.wmd.lastChild.replaceChildren(markdown(self.wtext, self.sources));
      scrollDown();
    });
  };
  // The quote has been said; the assistant's written answer follows it, under its own label.
  Answer.prototype.startWriting = function () {
    this.md.parentNode.insertBefore(el("p", "label", "Quoted from the docs"), this.md);
    this.wmd = this.node.appendChild(el("div", "written"));
    this.wmd.hidden = true;
    this.wmd.appendChild(el("p", "label", "In the assistant's words"));
    this.wmd.appendChild(el("div", "md"));
    setStatus("The quote above is from the docs. Writing an answer\u2026");
  };
  Answer.prototype.done = function (f) {
    conversation = f.conversation_id || conversation;
    if (f.ask_a_person !== undefined) person = f.ask_a_person;
    this.id = f.answer_id;
    this.related = f.related || [];
    this.show(!!f.refused);
    // Never cut silently: say so when the answer stopped short, or the written one never came.
    if (f.truncated) this.note("This answer was cut short: it ends at its last full sentence.");
    else if (this.wmd && !this.wtext && NOT_WRITTEN[f.written]) this.note(NOT_WRITTEN[f.written]);
    if (this.wtext) this.text = this.text + "\n\n" + this.wtext;
    remember(this);
    finish();
  };
  Answer.prototype.note = function (words) {
    var line = this.node.insertBefore(el("p", "note", words), this.node.querySelector(".src"));
    line.setAttribute("role", "note");
  };
  var NOT_WRITTEN = {
    busy: "The assistant is busy, so you get the quote from the docs right away.",
    late: "A written answer was not ready in time; the quote from the docs is the answer.",
    unavailable: "A written answer is not available right now; the quote from the docs is the answer.",
    cut: "The written answer was cut short, so only the quote from the docs is shown.",
  };
  // A finished answer: streamed just now, or restored from the visitor's session.
  Answer.prototype.show = function (refused) {
    this.refused = refused;
    this.md.replaceChildren(markdown(this.text || SORRY, this.sources));
    if (this.wmd) this.wmd.lastChild.replaceChildren(markdown(this.wtext, this.sources));
    if (refused) {
      this.node.classList.add("refused");
      this.showRelated();
      askAPerson(this);
    } else if (this.sources.length) {
      // The sources the answer cites ([n]); all of them when it cites none (an LLM that
      // answered without markers). A passage that was found but not used is not a source.
      var cited = {};
      ((this.text + this.wtext).match(/\[(\d+)\]/g) || []).forEach(function (m) { cited[m.slice(1, -1)] = true; });
      var shown = this.sources.filter(function (s) { return cited[String(s.n)]; });
      if (!shown.length) shown = this.sources;
      // An answer the project's team wrote (a curated answer) says so, above the text.
      if (shown.some(function (s) { return s.curated; })) {
        this.node.insertBefore(el("p", "team", "Answer from the team"), this.md);
      }
      var list = this.node.appendChild(el("ol", "src"));
      list.setAttribute("aria-label", "Sources");
      shown.forEach(function (s) {
        var li = list.appendChild(el("li"));
        li.value = s.n; // keeps the number the answer's [n] uses
        if (s.curated) {
          li.appendChild(safeLink(s.url, "Answer from the team") || el("span", "doc", "Answer from the team"));
          return;
        }
        li.appendChild(safeLink(s.url, s.title || s.url) || el("span", "doc", s.title + " (document)"));
      });
    }
    feedbackButtons(this);
  };
  // Under a refusal: the nearest pages on the subject, never presented as the answer.
  Answer.prototype.showRelated = function () {
    var pages = (this.related || []).filter(function (p) { return p && p.url; });
    if (!pages.length) return;
    var box = this.node.appendChild(el("div", "related"));
    var title = box.appendChild(el("p", "", "These pages may help:"));
    title.id = "askai-rel-" + (this.id || Math.random().toString(36).slice(2));
    var list = box.appendChild(el("ul"));
    list.setAttribute("aria-labelledby", title.id);
    pages.forEach(function (p) {
      var link = safeLink(p.url, p.title || p.url);
      if (link) list.appendChild(el("li")).appendChild(link);
    });
  };
  Answer.prototype.fail = function (f) {
    var self = this;
    var words = REFUSED_DOOR[f.code];
    if (words) f = { code: f.code, message: words, retry: false };
    var line = self.node.appendChild(el("p", "err", f.message || "Something went wrong."));
    line.setAttribute("role", "alert");
    if (f.code === "unknown_conversation") forgetConversation();
    if (f.retry !== false && f.code !== "invalid" && f.code !== "question_too_long") {
      var again = self.node.appendChild(el("button", "retry", "Try again"));
      again.type = "button";
      again.addEventListener("click", function () {
        self.node.previousSibling.remove();
        self.node.remove();
        ask(self.question);
      });
    }
    finish();
  };
  // A page the project does not let in: retrying cannot help, so say why in words.
  var REFUSED_DOOR = {
    origin_not_allowed: "This assistant isn't enabled on this website: its address is not " +
      "among the project's allowed origins. The site owner can add it in the Ask AI console.",
    unknown_project: "This assistant's project key is unknown. The site owner needs to check " +
      "the key in the widget's data-project attribute.",
  };
  var CLOSE_CODES = { 4401: "unknown_project", 4403: "origin_not_allowed" };

  function finish() {
    current = null;
    send.disabled = false;
    log.setAttribute("aria-busy", "false");
    setStatus("");
    scrollDown();
  }
  // A local model answers one question at a time: say where this one is.
  function waitingText(f) {
    if (f.ahead > 0) {
      return "Waiting for the assistant: " + f.ahead + (f.ahead === 1 ? " question" : " questions") +
        " ahead of yours\u2026";
    }
    if (f.read >= 1) return "Writing the answer\u2026";
    return "Reading the sources" + (f.read > 0 ? " (" + Math.round(f.read * 100) + "%)" : "") + "\u2026";
  }
  function setStatus(text) {
    status.textContent = text;
  }
  function scrollDown() {
    log.scrollTop = log.scrollHeight;
  }

  // ---- The conversation, kept for the visitor's session (this tab, this site) ----------------
  var KEPT = "askai-conversation:" + cfg.project;
  var kept = [];

  function store() {
    try {
      sessionStorage.setItem(KEPT, JSON.stringify({ conversation: conversation, person: person, messages: kept, topic: cfg.topic, page: location.pathname }));
    } catch (e) { /* storage blocked or full: the conversation lives on this page only */ }
  }
  function remember(answer) {
    answer.kept = { question: answer.question, text: answer.text, sources: answer.sources,
      refused: answer.refused, id: answer.id || null, related: answer.related || [], vote: null,
      handoff: null };
    kept.push(answer.kept);
    store();
  }
  // A conversation handed to a person stays handed: after a reload the refusal shows what the
  // visitor was told, not "Ask a person" again.
  function rememberHandoff(answer, message) {
    answer.handoff = message;
    if (answer.kept) answer.kept.handoff = message;
    store();
  }
  // A vote survives a reload: the thumbs show what this visitor already said.
  function rememberVote(answer, vote) {
    kept.forEach(function (m) { if (m.id && m.id === answer.id) m.vote = vote; });
    store();
  }
  // A change of topic (AskAI.setTopic) in the transcript: what follows starts afresh.
  function topicBreak(topic) {
    var line = log.appendChild(el("p", "topic", topic ? "New topic: " + topic : "New topic"));
    line.setAttribute("role", "separator");
    line.setAttribute("aria-label", (topic ? "New topic: " + topic : "New topic") +
      ". Earlier questions are not used for the next answer.");
    scrollDown();
  }
  function forgetConversation() {
    conversation = null; // the next question starts a new conversation on the server
    store();
  }
  function restore() {
    var saved;
    try { saved = JSON.parse(sessionStorage.getItem(KEPT) || "null"); } catch (e) { return; }
    if (!saved || !Array.isArray(saved.messages)) return;
    conversation = typeof saved.conversation === "string" ? saved.conversation : null;
    person = saved.person && typeof saved.person.via === "string" ? saved.person : null;
    saved.messages.forEach(function (m) {
      if (m && typeof m.topic === "string") {
        topicBreak(m.topic);
        kept.push({ topic: m.topic });
        return;
      }
      if (!m || typeof m.question !== "string" || typeof m.text !== "string") return;
      var answer = new Answer(m.question);
      answer.text = m.text;
      answer.sources = Array.isArray(m.sources) ? m.sources : [];
      answer.related = Array.isArray(m.related) ? m.related : [];
      answer.id = m.id;
      answer.vote = m.vote === "up" || m.vote === "down" ? m.vote : null;
      answer.handoff = typeof m.handoff === "string" ? m.handoff : null;
      answer.kept = m;
      answer.show(!!m.refused);
      kept.push(m);
    });
    // Another page of the site with another topic: as AskAI.setTopic, a line in the
    // transcript and a fresh conversation on the server. (A reload of the same page keeps its
    // conversation, whatever topic the page's script had been given since.)
    var last = kept[kept.length - 1];
    if (last && !("topic" in last) && typeof saved.topic === "string" && saved.topic !== cfg.topic &&
        saved.page !== location.pathname) {
      topicBreak(cfg.topic);
      kept.push({ topic: cfg.topic });
      conversation = null;
      store();
    }
    chips.hidden = kept.length > 0;
  }
  function newConversation() {
    if (current) return; // let the answer on its way finish first
    kept = [];
    conversation = null;
    try { sessionStorage.removeItem(KEPT); } catch (e) { /* storage blocked */ }
    log.replaceChildren(hint, chips);
    chips.hidden = false;
    input.value = "";
    input.focus();
  }
  restart.addEventListener("click", newConversation);

  // ---- Feedback -------------------------------------------------------------------------------
  var clientId = (function () {
    var id;
    try { id = localStorage.getItem("askai-client"); } catch (e) { /* storage blocked */ }
    if (!id || !/^[\w-]{8,64}$/.test(id)) {
      var bytes = crypto.getRandomValues(new Uint8Array(16));
      id = Array.prototype.map.call(bytes, function (b) { return (b + 256).toString(16).slice(1); }).join("");
      try { localStorage.setItem("askai-client", id); } catch (e) { /* storage blocked */ }
    }
    return id;
  })();

  function postFeedback(answer, vote, comment) {
    var body = { project: cfg.project, answer_id: answer.id, client_id: clientId, vote: vote };
    if (comment != null) body.comment = comment;
    return fetch(cfg.http + "/api/v1/feedback", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    }).then(function (r) {
      if (!r.ok) throw new Error("feedback " + r.status);
    });
  }

  var THUMB = "M14 9V5a3 3 0 0 0-3-3l-4 9v11h11.28a2 2 0 0 0 2-1.7l1.38-9a2 2 0 0 0-2-2.3zM7 22H4a2 2 0 0 1-2-2v-7a2 2 0 0 1 2-2h3";

  function thumb(down) {
    var ns = "http://www.w3.org/2000/svg";
    var svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", "0 0 24 24");
    svg.setAttribute("width", "16");
    svg.setAttribute("height", "16");
    svg.setAttribute("aria-hidden", "true");
    svg.setAttribute("fill", "none");
    svg.setAttribute("stroke", "currentColor");
    svg.setAttribute("stroke-width", "2");
    if (down) svg.setAttribute("transform", "scale(1 -1)");
    var path = svg.appendChild(document.createElementNS(ns, "path"));
    path.setAttribute("d", THUMB);
    return svg;
  }

  function feedbackButtons(answer) {
    if (!answer.id) return;
    var bar = answer.node.appendChild(el("div", "fb"));
    var up = bar.appendChild(el("button"));
    var down = bar.appendChild(el("button"));
    var note = bar.appendChild(el("span", "", "Was this helpful?"));
    [[up, "up", "Helpful"], [down, "down", "Not helpful"]].forEach(function (b) {
      b[0].type = "button";
      b[0].appendChild(thumb(b[1] === "down"));
      b[0].setAttribute("aria-label", b[2]);
      b[0].setAttribute("aria-pressed", String(answer.vote === b[1]));
      b[0].addEventListener("click", function () {
        up.setAttribute("aria-pressed", String(b[1] === "up"));
        down.setAttribute("aria-pressed", String(b[1] === "down"));
        postFeedback(answer, b[1]).then(function () {
          answer.vote = b[1];
          rememberVote(answer, b[1]);
          note.textContent = b[1] === "down" ? "Thanks. What was missing?" : "Thanks!";
          if (b[1] === "down") {
            commentBox(answer, bar, note);
            if (!answer.refused) askAPerson(answer, true);
          }
        }, function () { note.textContent = "Could not send your feedback."; });
      });
    });
    if (answer.vote) note.textContent = "Thanks for your feedback.";
  }

  // ---- Ask a person: hand the conversation to the project's support team ---------------------
  function postHandoff(about, body, keepalive) {
    body.project = cfg.project;
    body.conversation_id = about;
    body.page_url = location.href;
    return fetch(cfg.http + "/api/v1/handoff", {
      method: "POST", credentials: "omit", keepalive: !!keepalive,
      headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    }).then(function (r) {
      return r.json().then(function (b) {
        if (!r.ok) throw new Error((b.error && b.error.message) || "Could not reach a person.");
        return b;
      });
    });
  }

  function askAPerson(answer, reveal) {
    if (answer.node.querySelector(".person")) return;
    if (answer.handoff) {
      var sent = answer.node.appendChild(el("div", "person")).appendChild(el("p", "done", answer.handoff));
      sent.setAttribute("role", "status");
      return;
    }
    if (!person || !conversation) return;
    var about = conversation; // the conversation of this answer, even after a new topic
    var box = answer.node.appendChild(el("div", "person"));
    // After a thumbs-down it comes below the comment box, out of sight: show it.
    if (reveal) setTimeout(function () { box.scrollIntoView({ block: "nearest" }); }, 0);
    if (person.via === "link") {
      // A support page: open it (a real link, so no pop-up blocker stands in the way) and
      // record the handoff on the way.
      var link = safeLink(person.url, "Ask a person");
      if (!link) return box.remove();
      link.className = "btn";
      link.addEventListener("click", function () { postHandoff(about, {}, true).catch(function () {}); });
      return box.appendChild(link);
    }
    var start = box.appendChild(el("button", "", "Ask a person"));
    start.type = "button";
    start.addEventListener("click", function () {
      start.remove();
      var f = box.appendChild(el("form"));
      f.appendChild(el("p", "", "We'll send this conversation and the address of this page to our support team."));
      var l = f.appendChild(el("label", "sr", "Your e-mail, so a person can reply (optional)"));
      var mail = f.appendChild(el("input"));
      mail.type = "email";
      mail.id = "askai-mail-" + (answer.id || "x");
      mail.autocomplete = "email";
      mail.placeholder = "Your e-mail, so we can reply";
      mail.maxLength = 254;
      l.htmlFor = mail.id;
      var go = f.appendChild(el("button", "", "Send to a person"));
      go.type = "submit";
      var said = box.appendChild(el("p", "done"));
      said.setAttribute("role", "status");
      f.addEventListener("submit", function (e) {
        e.preventDefault();
        go.disabled = true;
        postHandoff(about, { email: mail.value.trim() }).then(function (b) {
          f.remove();
          said.textContent = b.message;
          rememberHandoff(answer, b.message);
        }, function (err) {
          go.disabled = false;
          said.textContent = err.message;
        });
      });
      mail.focus({ preventScroll: true });
      f.scrollIntoView({ block: "nearest" });
    });
  }

  function commentBox(answer, bar, note) {
    if (bar.querySelector("form")) return;
    var f = bar.appendChild(el("form"));
    var l = f.appendChild(el("label", "sr", "What was wrong? (optional)"));
    var t = f.appendChild(el("textarea"));
    t.id = "askai-c-" + answer.id;
    l.htmlFor = t.id;
    t.placeholder = "What was missing? (optional)";
    t.maxLength = 2000;
    var b = f.appendChild(el("button", "", "Send"));
    b.type = "submit";
    f.addEventListener("submit", function (e) {
      e.preventDefault();
      postFeedback(answer, "down", t.value).then(function () {
        f.remove();
        note.textContent = "Thank you, we'll use it to improve the answers.";
      }, function () { note.textContent = "Could not send your comment."; });
    });
    // The box is added below the last answer: bring all of it (and its Send) into the panel.
    t.focus({ preventScroll: true });
    f.scrollIntoView({ block: "nearest" });
  }

  // ---- Transport: WebSocket first, server-sent events when sockets are blocked ----------------
  var socket = null, socketReady = null, socketFailures = 0;

  function connectSocket() {
    if (socketReady) return socketReady;
    socketReady = new Promise(function (resolve, reject) {
      var ws, opened = false;
      function failed() {
        socket = socketReady = null;
        socketFailures++;
        reject(new Error("no socket"));
      }
      try {
        ws = new WebSocket(cfg.ws + "/ws/ask/?project=" + encodeURIComponent(cfg.project));
      } catch (e) {
        return failed();
      }
      var timer = setTimeout(function () { ws.close(); }, 8000);
      ws.onopen = function () {
        opened = true;
        clearTimeout(timer);
        socket = ws;
        socketFailures = 0;
        resolve(ws);
      };
      ws.onmessage = function (e) {
        var f;
        try { f = JSON.parse(e.data); } catch (err) { return; }
        if (current && current.via === ws) current.frame(f);
      };
      ws.onclose = function (e) {
        clearTimeout(timer);
        var refusal = CLOSE_CODES[e.code];
        if (refusal) {
          // The server let the socket in only to say why it refuses it: no fallback, no retry.
          socket = socketReady = null;
          if (current && (current.via === ws || !current.via)) current.fail({ code: refusal });
          return reject(new Error(refusal));
        }
        if (!opened) return failed();
        socket = socketReady = null; // the next question reconnects
        if (current && current.via === ws) {
          current.fail({ code: "dropped", message: "The connection dropped. Try again to reconnect." });
        }
      };
    });
    return socketReady;
  }

  function ask(question) {
    if (current) return;
    var answer = (current = new Answer(question));
    send.disabled = true;
    // Screen readers wait for the whole answer instead of reading it word by word.
    log.setAttribute("aria-busy", "true");
    chips.hidden = true; // suggestions belong to the empty panel
    var frame = { question: question, topic: cfg.topic };
    // Whose memory: the signed-in user the host page named, else this browser's visitor id.
    if (cfg.userId) {
      frame.user_id = cfg.userId;
      frame.user_hash = cfg.userHash;
    } else {
      frame.visitor_id = clientId;
    }
    if (conversation) frame.conversation_id = conversation;
    // Sockets that keep failing (a proxy that blocks them): use server-sent events instead.
    var useHttp = cfg.transport === "sse" || (cfg.transport === "auto" && socketFailures >= 2);
    setStatus(socket || useHttp ? "Thinking\u2026" : "Connecting\u2026");
    if (useHttp) return askOverHttp(answer, frame);
    connectSocket().then(function (ws) {
      setStatus("Thinking\u2026");
      answer.via = ws;
      ws.send(JSON.stringify(frame));
    }, function (e) {
      if (current !== answer) return; // already told why (a refused origin or key)
      if (cfg.transport === "auto") return askOverHttp(answer, frame);
      answer.fail({ code: "unreachable", message: "The assistant can't be reached right now." });
    });
  }

  function askOverHttp(answer, frame) {
    frame.project = cfg.project;
    fetch(cfg.http + "/api/v1/ask/stream", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(frame),
    }).then(function (r) {
      if (!r.ok) {
        return r.json().then(function (b) { answer.fail(b.error); });
      }
      var reader = r.body.getReader(), decoder = new TextDecoder(), buffer = "";
      function pump() {
        return reader.read().then(function (chunk) {
          if (chunk.done) {
            if (current === answer) answer.fail({ code: "dropped", message: "The connection dropped." });
            return;
          }
          buffer += decoder.decode(chunk.value, { stream: true });
          var events = buffer.split("\n\n");
          buffer = events.pop();
          events.forEach(function (block) {
            var line = block.split("\n").filter(function (l) { return l.indexOf("data: ") === 0; })[0];
            if (line && current === answer) answer.frame(JSON.parse(line.slice(6)));
          });
          return pump();
        });
      }
      return pump();
    }).catch(function () {
      if (current === answer) answer.fail({ code: "unreachable", message: "The assistant can't be reached right now." });
    });
  }

  // ---- Public API -----------------------------------------------------------------------------
  window.AskAI = {
    open: open,
    close: close,
    setTopic: function (topic, question) {
      var changed = String(topic || "") !== cfg.topic;
      cfg.topic = String(topic || "");
      if (question != null) {
        if (input.value === cfg.question) input.value = String(question);
        cfg.question = String(question);
      }
      forgetConversation(); // a new page, a new conversation: the server starts afresh
      if (changed && kept.length && !kept[kept.length - 1].topic) {
        topicBreak(cfg.topic);
        kept.push({ topic: cfg.topic });
        store();
      }
      showTopic();
    },
    // identify(id, hash): the host page's signed-in user; hash = hex HMAC-SHA256 of the id
    // with the project's secret key, computed on the host's server. identify(null) forgets.
    identify: function (id, hash) {
      cfg.userId = id == null ? "" : String(id);
      cfg.userHash = hash == null ? "" : String(hash);
      forgetConversation();
    },
    ask: function (question) {
      open();
      var q = String(question == null ? input.value || cfg.question : question).trim();
      if (q && !current) {
        input.value = "";
        ask(q);
      }
    },
  };

  restore();

  function mount() {
    document.body.appendChild(host);
    applyTheme();
    [document.documentElement, document.body].forEach(function (node) {
      themeWatch.observe(node, { attributes: true, attributeFilter: ["class", "style", "data-theme", "data-bs-theme"] });
    });
  }
  if (document.body) mount();
  else document.addEventListener("DOMContentLoaded", mount);
})();
