// maeb's own stand-in for a Web Worker when the site is opened from the disk (file://).
//
// Why: the theme's search runs lunr in a Web Worker, and browsers refuse `new Worker(...)` for a
// file:// page (its origin is opaque), so the theme hides the search box. Its offline plugin fixes
// that with a shim it loads from a public CDN, which a reader without network (or one who does not
// want a third-party script) never gets. This file is the same idea, served from the site itself:
// the worker's script runs in a hidden, same-origin iframe, and messages cross by events.
//
// The file name holds "iframe-worker" on purpose: the offline plugin then does not add the CDN shim
// (it adds one only when no polyfill of that name is configured; see mkdocs.yml extra.polyfills).
// Served over http(s) nothing changes: the browser's own Worker is kept.
(function () {
  "use strict";
  if (location.protocol !== "file:" || typeof window.IFrameWorker === "function") return;

  function loadScript(doc, src) {
    return new Promise(function (resolve, reject) {
      var script = doc.createElement("script");
      script.src = src;
      script.onload = function () { resolve(); };
      script.onerror = function () { reject(new Error("could not load " + src)); };
      (doc.head || doc.documentElement).appendChild(script);
    });
  }

  function IFrameWorker(url) {
    var target = new EventTarget();
    var self = this;
    var src = new URL(String(url), document.baseURI).href;
    var pending = [];
    var ready = false;
    var win = null;
    this.onmessage = null;
    this.onerror = null;
    this.addEventListener = target.addEventListener.bind(target);
    this.removeEventListener = target.removeEventListener.bind(target);
    this.dispatchEvent = target.dispatchEvent.bind(target);

    function emit(type, init) {
      var event = type === "message" ? new MessageEvent("message", init) : new ErrorEvent("error", init);
      self.dispatchEvent(event);
      var handler = type === "message" ? self.onmessage : self.onerror;
      if (typeof handler === "function") handler.call(self, event);
    }

    function deliver(data) {
      // a copy, as a real worker gets (structured clone), delivered after the caller's turn
      var copy = typeof structuredClone === "function" ? structuredClone(data) : data;
      setTimeout(function () { win.dispatchEvent(new win.MessageEvent("message", { data: copy })); }, 0);
    }

    var frame = document.createElement("iframe");
    frame.setAttribute("aria-hidden", "true");
    frame.setAttribute("tabindex", "-1");
    frame.style.display = "none";
    frame.addEventListener("load", function () {
      win = frame.contentWindow;
      var doc = frame.contentDocument;
      // the worker's globals: postMessage answers the page, importScripts loads in order
      win.postMessage = function (data) {
        var copy = typeof structuredClone === "function" ? structuredClone(data) : data;
        setTimeout(function () { emit("message", { data: copy }); }, 0);
      };
      win.importScripts = function () {
        var urls = Array.prototype.slice.call(arguments);
        return urls.reduce(function (chain, u) {
          return chain.then(function () { return loadScript(doc, new URL(u, src).href); });
        }, Promise.resolve());
      };
      loadScript(doc, src).then(
        function () {
          ready = true;
          pending.splice(0).forEach(deliver);
        },
        function (error) { emit("error", { message: error.message, filename: src }); }
      );
    }, { once: true });
    frame.srcdoc = "<!doctype html><title>search worker</title>";
    (document.body || document.documentElement).appendChild(frame);

    this.postMessage = function (data) {
      if (ready) deliver(data);
      else pending.push(data);
    };
    this.terminate = function () {
      ready = false;
      pending.length = 0;
      frame.remove();
    };
  }

  // the theme's search worker looks for this name to find its lunr language files next to itself
  window.IFrameWorker = IFrameWorker;
  window.Worker = IFrameWorker;
})();
