// form (StackedForm): collapsed elements show their summary; the expanded one shows its fields, with
// server-side errors, and the call to action enabled only while the element is valid.
import { act, clearNotice, confirmingButton, controlHeader, el, focusedNear, memberColor, memberName, reportError } from "./common.js";

/**
 * Claims a field while it has focus (and again while the user keeps typing, within the lease), and gives it up on
 * blur: everyone sees who is on which field; an exclusive claim keeps others' writes off it.
 */
function fieldClaim(room, control, target, input) {
  let claimedAt = 0;
  let attempt = 0;
  const claim = () => {
    const mine = ++attempt;
    claimedAt = Date.now();
    room.claim(control, target).catch(() => { if (mine === attempt) claimedAt = 0; });
  };
  // Renewed while the user keeps typing, at a third of the lease the server states for this control's claims.
  const lease = () => Object.values(room.state?.controls?.[control]?.claims ?? {})[0]?.leaseMs ?? 30000;
  input.addEventListener("focus", claim);
  input.addEventListener("input", () => { if (claimedAt === 0 || Date.now() - claimedAt > lease() / 3) claim(); });
  input.addEventListener("blur", () => {
    attempt++;
    claimedAt = 0;
    room.unclaim(control, target, "blur").catch(() => {}); // not_holder when it had lapsed: nothing to do
  });
}

/**
 * Sends `set` while the user types: debounced, always the latest value, flushed on change/blur. A value whose send
 * the lost connection cut off is kept (the field shows it) and sent again once the page has rejoined and caught up —
 * unless the field changed meanwhile (someone else's value, a Start over, a room that started over): then it is
 * dropped, and the page says so.
 */
function fieldSender(room, control, element, field, label) {
  let timer = null;
  let pending;
  let inFlight = 0; // sets sent and not yet answered (their patch comes before their ack)
  let unsent; // a value the connection dropped before it was answered
  let unsentBase, unsentEpoch; // the field's value in the room, and the room's epoch, when it was cut off
  const sent = []; // the last values sent: their echoes are not someone else's change
  const roomValue = () => room.state?.controls?.[control]?.elements?.find((e) => e.id === element)?.fields?.find((f) => f.id === field)?.value ?? null;
  const self = {};
  const flush = () => {
    if (timer === null) return;
    clearTimeout(timer);
    timer = null;
    sent.push(pending);
    if (sent.length > 20) sent.shift();
    inFlight++;
    const value = pending;
    room.intent(control, "set", { element, field, value }).then(
      () => { if (unsent === value) unsent = undefined; clearNotice(control, room); },
      (e) => {
        if (e.code !== "disconnected") return reportError(e, control, room);
        if (unsent === undefined) { unsentBase = roomValue(); unsentEpoch = room.shownEpoch; }
        unsent = value;
      },
    ).finally(() => { inFlight--; });
  };
  // Caught up: a snapshot, or (after a resume) the patch of this session's own join, which follows the missed ones; a
  // room without presence makes no such patch, so there the resume itself is the sign.
  const caughtUp = (e) => e.type === "status" ? e.detail.status === "open" && Object.keys(room.state?.presence ?? {}).length === 0
    : e.detail.reason === "snapshot" || (e.detail.patch?.cause?.kind === "join" && e.detail.patch.cause.session === room.session);
  const resend = (e) => {
    if (unsent === undefined || room.status !== "open" || !self.alive() || !caughtUp(e)) return;
    const value = unsent;
    unsent = undefined;
    if (room.shownEpoch !== unsentEpoch || JSON.stringify(roomValue()) !== JSON.stringify(unsentBase)) {
      reportError({ code: "not_saved", message: `What you typed in ${label} was not saved: it changed while the connection was down.` }, control, room);
      self.dropped?.(roomValue());
      return;
    }
    pending = value;
    timer = 0;
    flush();
  };
  room.addEventListener("state", resend);
  room.addEventListener("status", resend);
  self.alive = () => true;
  // (Descriptors, not Object.assign: the getters must stay getters.)
  return Object.defineProperties(self, Object.getOwnPropertyDescriptors({
    /** A value of this page's is on its way (or waits for the connection): the field keeps it until it is answered. */
    get inFlight() { return inFlight > 0 || unsent !== undefined; },
    /** Typed here while the connection was lost: not saved yet. */
    get unsaved() { return unsent !== undefined; },
    /** Whether `value` is one this page sent (an echo), not another member's. */
    sentHere(value) { return sent.includes(value); },
    send(value, immediate = false) {
      pending = value;
      if (timer !== null) clearTimeout(timer);
      timer = setTimeout(flush, 120);
      if (immediate) flush();
    },
    flush,
    get typing() { return timer !== null; },
  }));
}

function inputFor(room, control, elementID, field) {
  const inputID = `${control}-${elementID}-${field.id}`;
  const sender = fieldSender(room, control, elementID, field.id, field.label || field.id);
  let touched = false;
  let typedHere = false; // its user typed in it since it was focused
  let input;
  if (field.type === "boolean") {
    input = el("input", { type: "checkbox", id: inputID });
    input.addEventListener("change", () => sender.send(input.checked, true));
  } else if (field.type === "choice") {
    input = el("select", { id: inputID }, el("option", { value: "" }, "—"), ...field.choices.map((c) => el("option", { value: c }, c)));
    input.addEventListener("change", () => sender.send(input.value === "" ? null : input.value, true));
  } else {
    input = el("input", { id: inputID, type: field.type === "number" ? "number" : "text", autocomplete: "off" });
    const read = () => (input.value === "" ? null : field.type === "number" ? Number(input.value) : input.value);
    input.addEventListener("input", () => { typedHere = true; sender.send(read()); });
    input.addEventListener("change", () => sender.flush());
    input.addEventListener("blur", () => sender.flush());
  }
  sender.alive = () => input.isConnected;  // a part drawn again has new fields: this one's sender is done
  sender.dropped = (value) => { if (last) update({ ...last.f, value }, last.claims); };  // the room's value, no "Not saved yet"
  let last = null; // the field and claims last shown: leaving the field shows them as they are now
  // (unless what was typed is still on its way: then the field keeps it, and its echo follows)
  input.addEventListener("blur", () => { touched = true; typedHere = false; if (last) update(last.f, last.claims); });
  const error = el("p", { class: "field-error", id: `${inputID}-error`, "aria-live": "polite" });
  const changed = el("p", { class: "field-changed", id: `${inputID}-changed`, "aria-live": "polite", "data-testid": `${inputID}-changed` });
  const editor = el("span", { class: "editor", "data-testid": `${inputID}-editor` });
  input.setAttribute("aria-describedby", `${error.id} ${inputID}-changed`);
  fieldClaim(room, control, `${elementID}.${field.id}`, input);
  const row = el("div", { class: `field field-${field.type}` },
    el("div", { class: "field-head" }, el("label", { for: inputID }, field.label || field.id,
      field.required ? el("span", { class: "required-mark", title: "required", "aria-hidden": "true" }, "*") : null), editor),
    input, changed, error);
  function update(f, claims) {
    last = { f, claims };
    // Who else is on this field (their claim, on the field or its whole element), shown on the field itself.
    const claim = claims?.[`${elementID}.${f.id}`] ?? claims?.[elementID] ?? claims?.["*"];
    const other = claim && claim.session !== room.session ? claim : null;
    editor.textContent = other ? `${memberName(room, other.session)} is editing` : "";
    row.classList.toggle("claimed", other !== null);
    row.style.setProperty("--editor-color", other ? memberColor(room, other.session) : "transparent");
    input.readOnly = other !== null && other.exclusive;
    // Never overwrite what the local user is typing with an echo of an older value. A field only focused (clicked
    // into, or focused for its user by the page) shows the room's value: what is in it is kept only once its user has
    // typed in it since focusing it (issue 41: a focused, untouched Age stayed empty while the room had 30).
    const editing = focusedNear(input) === input && (sender.typing || typedHere) || sender.inFlight;
    if (!editing) {
      if (f.type === "boolean") input.checked = f.value === true;
      else input.value = f.value ?? "";
    }
    // While this page keeps what its user is typing, someone else's change is said, not hidden: their value, and
    // that the next keystroke here replaces it.
    const theirs = focusedNear(input) === input && editing && !sender.typing && String(f.value ?? "") !== input.value
      && !sender.sentHere(f.value);
    changed.textContent = sender.unsaved ? "Not saved yet: it is sent when the connection is back"
      : theirs ? `Changed meanwhile to “${f.value ?? ""}” — what you type replaces it` : "";
    input.required = !!f.required;
    // Errors once the field has been left (not while its first value is being typed), or for a value typed elsewhere.
    const shown = f.error !== null && (touched || (focusedNear(input) !== input && f.value !== null && f.value !== "" && f.value !== false));
    input.setAttribute("aria-invalid", String(shown));
    error.textContent = shown ? f.error : "";
  }
  return { row, update };
}

/** A collected value in words: "Yes"/"No" for a checkbox, "—" for none. */
function shownValue(value) {
  if (value === null || value === undefined) return "—";
  if (typeof value === "boolean") return value ? "Yes" : "No";
  return String(value);
}

/** What a completed form collected, element by element: `{element: {field: value}}` as a definition list. */
function collected(c) {
  const dl = el("dl", { class: "collected", "data-testid": "form-data" });
  for (const e of c.elements) {
    dl.append(el("dt", {}, e.title || e.id));
    const values = c.data?.[e.id] ?? {};
    dl.append(el("dd", {}, ...e.fields.map((f) => el("div", {}, `${f.label || f.id}: `,
      el("strong", {}, shownValue(values[f.id]))))));
  }
  return dl;
}

export function formView(room, id) {
  const [title, caption, notice] = controlHeader(id, "A form filled in together: everyone sees each keystroke; each part unlocks the next.");
  const status = el("p", { class: "phase", "aria-live": "polite", "data-testid": `${id}-status` });
  const list = el("ol", { class: "elements" });
  const result = el("div", { class: "result" });
  // Focus follows a part that opened or closed only on the page whose user made it so (their click, until its answer):
  // a bystander typing elsewhere keeps their place (issue 41: Cat's Continue moved Ann's focus to Age).
  let acting = 0;
  const actHere = (intent, args) => {
    acting += 1;
    return act(room, id, intent, args).finally(() => { acting -= 1; });
  };
  const reset = confirmingButton("Start over", "Clear it for everyone?", () => actHere("reset"));
  const element = el("section", { class: "control", "data-control": id, "data-kind": "form", "aria-labelledby": `${id}-label` },
    title, caption, status, list, result, reset, notice);
  const rows = new Map(); // element id → {li, body, inputs: Map, cta, shape}
  return {
    element,
    update(c) {
      // A part that closed or opened replaces its fields: focus that was in the form stays in it, on the open part.
      const focusWasHere = element.contains(focusedNear(element));
      title.textContent = c.label;
      status.textContent = c.completed ? "Completed — here is what was entered:" : `Part ${c.elements.findIndex((e) => e.id === c.current) + 1} of ${c.elements.length}`;
      result.replaceChildren(...(c.completed ? [collected(c)] : []));
      list.hidden = c.completed; // the collected list says it all: the parts' summaries would repeat it
      for (const e of c.elements) {
        let row = rows.get(e.id);
        const shape = `${e.status}:${e.fields.map((f) => f.id + f.type).join(",")}`;
        if (!row || row.shape !== shape) {
          const fresh = buildElement(room, id, e, c, actHere);
          fresh.shape = shape;
          if (row) row.li.replaceWith(fresh.li);
          else list.append(fresh.li); // elements arrive in order; their list never changes
          row = fresh;
          rows.set(e.id, row);
        }
        row.update(e, c);
      }
      if (focusWasHere && acting > 0 && !element.contains(focusedNear(element))) {
        (list.querySelector(".element.expanded input, .element.expanded select") ?? reset).focus();
      }
    },
  };
}

function buildElement(room, control, e, form, actHere) {
  const heading = el("h3", {}, e.title || e.id);
  const summary = el("p", { class: "summary" });
  const li = el("li", { class: `element ${e.status}`, "data-element": e.id }, heading);
  const inputs = new Map();
  // Why the button waits, for everyone in the room (a field's own error shows once that field was left).
  const need = el("p", { class: "hint", "data-testid": `${control}-${e.id}-needs` });
  let cta = null;
  let edit = null;
  if (e.status === "expanded") {
    for (const f of e.fields) {
      const input = inputFor(room, control, e.id, f);
      inputs.set(f.id, input);
      li.append(input.row);
    }
    cta = el("button", { type: "button", class: "cta", "data-testid": `${control}-cta` });
    cta.addEventListener("click", () => actHere("finish", { element: e.id }));
    li.append(cta, need);
  } else {
    edit = el("button", { type: "button", class: "text", "aria-label": `Edit ${e.title || e.id}` }, "Edit");
    edit.addEventListener("click", () => actHere("expand", { element: e.id }));
    li.append(summary, edit);
  }
  return {
    li,
    update(state, c) {
      li.className = `element ${state.status}${state.valid ? " valid" : ""}`;
      // A part not reached yet has nothing to summarise (its summary would claim what nobody did yet).
      const order = c.elements.map((x) => x.id);
      const done = c.completed || order.indexOf(state.id) < order.indexOf(c.current);
      summary.textContent = done ? state.summary : "Not filled in yet";
      for (const f of state.fields) inputs.get(f.id)?.update(f, c.claims);
      if (edit) {
        // Only filled elements before the expanded one can be reopened (the server refuses the others).
        const order = c.elements.map((x) => x.id);
        edit.hidden = c.completed || order.indexOf(state.id) > order.indexOf(c.current);
      }
      if (cta) {
        cta.hidden = c.cta === null;
        cta.textContent = c.cta ?? "";
        cta.disabled = !c.canFinish;
        const missing = state.fields.filter((f) => f.error !== null).map((f) => f.label || f.id);
        need.textContent = c.cta !== null && !c.canFinish && missing.length ? `To continue: ${missing.join(", ")}.` : "";
      }
    },
  };
}
