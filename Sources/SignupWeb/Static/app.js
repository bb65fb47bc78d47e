// signupd-web's page script: the form drawn by the bridge becomes live. Every keystroke is
// sent to signupd over the WebSocket (/ws, signupd's line protocol, one JSON message per
// frame) and signupd's answers are shown as they come: each field's message, the button
// enabled exactly when signupd says so, a spinner while busy, the result. Without this
// script the same form still works as a plain POST.
"use strict";

(() => {
  const form = document.getElementById("form");
  if (!form || !window.WebSocket) return;

  const formName = form.dataset.form;
  const button = document.getElementById("submit");
  const busyNote = document.getElementById("busy");
  const result = document.getElementById("result");
  const signedIn = document.getElementById("signed-in");
  const csrf = form.elements.csrf.value;
  const fieldNames = Array.from(form.querySelectorAll(".field"), (div) => div.dataset.field);
  // The session and its resume secret survive a reload (this tab only): the form comes back
  // with every value, from signupd. Secret values are never kept here; signupd keeps them.
  const storeKey = "signupd-web:" + formName;
  const stored = () => JSON.parse(sessionStorage.getItem(storeKey) || "null");
  const store = (value) => (value ? sessionStorage.setItem(storeKey, JSON.stringify(value)) : sessionStorage.removeItem(storeKey));

  let socket = null;
  let session = null;
  let lastSeq = 0;
  let locale = form.dataset.locale;
  let retries = 0;
  // Until a WebSocket has worked once, after two failures the form goes back to a plain POST
  // (a proxy that drops WebSockets must not leave a dead page).
  let everConnected = false;
  let plain = false;
  // Why signupd-web could not serve a live form (its `bye` before `hello`), if it said.
  let refusal = null;

  button.disabled = true;
  form.setAttribute("aria-live", "off");

  function send(request) {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(request));
  }

  function input(name) {
    return form.elements[name];
  }

  function keep() {
    if (!session) return;
    const values = {};
    for (const name of fieldNames) if (input(name).type !== "password") values[name] = input(name).value;
    store({ session: session.id, resume: session.resume, values });
  }

  for (const name of fieldNames) {
    input(name).addEventListener("input", () => {
      const field = input(name);
      if (field.dataset.kept) {
        delete field.dataset.kept;
        field.placeholder = "";
      }
      if (session) send({ op: "set", session: session.id, field: name, value: field.value });
      keep();
    });
  }

  // With the button disabled a browser submits nothing on Enter: say where the problem is.
  form.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && event.target.tagName === "INPUT" && button.disabled && !plain) {
      event.preventDefault();
      focusFirstProblem();
    }
  });

  function focusFirstProblem() {
    for (const name of fieldNames) {
      if (document.getElementById("m-" + name).dataset.state !== "ok") {
        input(name).focus();
        return;
      }
    }
  }

  form.addEventListener("submit", (event) => {
    if (plain && !session) return;  // the plain POST goes ahead
    event.preventDefault();
    if (!button.disabled && session) {
      send({ op: "submit", session: session.id, id: "submit" });
      return;
    }
    // Not ready yet: take the person to the first field that is not ok.
    focusFirstProblem();
  });

  // The language switcher: signupd sends the session's messages again in the new language,
  // and describe gives the labels.
  for (const link of document.querySelectorAll("nav.languages a[data-locale]")) {
    link.addEventListener("click", (event) => {
      if (!session) return;
      event.preventDefault();
      switchLocale(link.dataset.locale);
    });
  }

  function switchLocale(next) {
    locale = next;
    document.cookie = "lang=" + encodeURIComponent(next) + "; path=/; max-age=31536000; samesite=lax";
    send({ op: "locale", session: session.id, locale: next });
    send({ op: "describe", locale: next, id: "describe" });
    for (const link of document.querySelectorAll("nav.languages a[data-locale]")) {
      if (link.dataset.locale === next) link.setAttribute("aria-current", "true");
      else link.removeAttribute("aria-current");
    }
  }

  function relabel(description) {
    document.documentElement.lang = description.locale;
    form.dataset.locale = description.locale;
    for (const described of description.forms) {
      const link = document.querySelector('nav.forms a[data-form-link="' + described.name + '"]');
      if (link) link.textContent = described.title || described.submitLabel;
      if (described.name !== formName) continue;
      const title = described.title || described.submitLabel;
      document.title = title;
      document.getElementById("title").textContent = title;
      button.querySelector(".label").textContent = described.submitLabel;
      for (const field of described.fields) {
        const label = form.querySelector('label[for="f-' + field.name + '"]');
        if (label) label.textContent = field.label;
      }
    }
  }

  function showValidation(event) {
    const message = document.getElementById("m-" + event.field);
    if (!message) return;
    message.textContent = event.message;
    message.dataset.state = event.state;
    if (event.state === "failed") input(event.field).setAttribute("aria-invalid", "true");
    else input(event.field).removeAttribute("aria-invalid");
  }

  function showBusy(busy) {
    button.classList.toggle("busy", busy);
    form.setAttribute("aria-busy", busy ? "true" : "false");
    busyNote.hidden = !busy;
  }

  function showResult(event) {
    result.hidden = false;
    result.dataset.ok = String(event.ok);
    result.textContent = event.message;
    // The button is disabled now: keep keyboard focus on the answer, not on the page's body.
    result.tabIndex = -1;
    result.focus();
    if (!event.ok) return;
    // Done: this form's session is finished; a new visit starts afresh.
    store(null);
    if (event.claim) claimLogin(event.claim);
  }

  // A login's token never reaches this script: signupd-web gives a one-time claim, which the
  // bridge turns into an HttpOnly cookie.
  async function claimLogin(claim) {
    const body = new URLSearchParams({ claim, csrf });
    const answer = await fetch("/session", { method: "POST", body, credentials: "same-origin" });
    if (!answer.ok) return;
    const who = await answer.json();
    document.getElementById("user").textContent = who.user.replace(/^tel:/, "");
    signedIn.hidden = false;
  }

  function openFresh() {
    session = null;
    delete form.dataset.session;
    lastSeq = 0;
    send({ op: "open", form: formName, locale, id: "open" });
  }

  function handle(event) {
    switch (event.event) {
      case "hello": {
        retries = 0;
        everConnected = true;
        if (plain) {
          plain = false;
          document.getElementById("notice-plain")?.remove();
        }
        const kept = stored();
        if (kept) send({ op: "resume", session: kept.session, resume: kept.resume, id: "resume" });
        else openFresh();
        return;
      }
      case "opened":
      case "resumed": {
        const kept = stored();
        session = { id: event.session, resume: event.resume || (kept && kept.resume) };
        if (event.event === "resumed") {
          // signupd kept every value; show the ones this tab may know, mark the secret ones kept.
          for (const name of fieldNames) {
            const field = input(name);
            if (field.type === "password") {
              field.value = "";
              field.dataset.kept = "true";
              field.placeholder = form.dataset.kept;
            } else if (kept && kept.values && name in kept.values) {
              field.value = kept.values[name];
            }
          }
        } else {
          // A new session: whatever is typed already goes to it.
          for (const name of fieldNames) {
            if (input(name).value) send({ op: "set", session: session.id, field: name, value: input(name).value });
          }
        }
        keep();
        // Sites and tests can tell the form is live.
        form.dataset.session = session.id;
        return;
      }
      case "description":
        relabel(event);
        return;
      case "bye":
        if (!everConnected) refusal = event.reason;
        return;
      case "error":
        if (event.id === "resume") {
          // The session ended meanwhile (or belongs to someone else): start a new one.
          store(null);
          openFresh();
        } else if (event.id === "submit" || event.session) {
          result.hidden = false;
          result.dataset.ok = "false";
          result.textContent = event.message;
        }
        return;
      case "closed":
        if (session && event.session === session.id) {
          store(null);
          openFresh();
        }
        return;
      default:
        break;
    }
    if (!session || event.session !== session.id) return;
    if (typeof event.seq === "number") {
      if (event.seq <= lastSeq) return;
      lastSeq = event.seq;
    }
    switch (event.event) {
      case "validation":
        showValidation(event);
        break;
      case "enabled":
        button.disabled = !event.value;
        break;
      case "busy":
        showBusy(event.value);
        break;
      case "result":
        showResult(event);
        break;
      case "locale":
        locale = event.locale;
        break;
      default:
        break;
    }
  }

  function connect() {
    socket = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws");
    socket.addEventListener("message", (message) => {
      try {
        handle(JSON.parse(message.data));
      } catch (error) {
        console.error("signupd-web:", error);
      }
    });
    socket.addEventListener("close", () => {
      // A dropped network, a restart: reconnect and resume the same session.
      session = null;
      delete form.dataset.session;
      button.disabled = !plain;
      const delay = Math.min(10000, 250 * 2 ** retries++);
      if (!everConnected && retries >= 2 && !plain) {
        plain = true;
        button.disabled = false;
        const notice = document.createElement("p");
        notice.id = "notice-plain";
        notice.className = "notice";
        notice.setAttribute("role", "status");
        notice.textContent = refusal ? form.dataset.unavailable : form.dataset.plain;
        form.prepend(notice);
      }
      window.setTimeout(connect, delay);
    });
  }

  connect();
})();
