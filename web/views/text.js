// text: a shared note several people type into at once. Each keystroke is a splice the server transforms against what
// others typed meanwhile (ot.js); the textarea keeps its cursor where it was in the text when someone else's edit lands.
import { controlHeader, el, reportError } from "./common.js";
import { SharedTextEditor } from "../ot.js";

/** UTF-16 offset of code point `n` in `s` (textarea selections count UTF-16 units; splices count code points). */
function utf16Offset(s, n) {
  let units = 0, points = 0;
  for (const ch of s) { if (points === n) break; units += ch.length; points++; }
  return units;
}

const codePoints = (s) => Array.from(s).length;

export function textView(room, id) {
  const [title, caption, notice] = controlHeader(id, "A shared note: type in it at the same time as others — nobody's text is lost.");
  const area = el("textarea", { rows: "6", id: `${id}-text`, "data-testid": `${id}-text`, spellcheck: "true" });
  const count = el("p", { class: "text-count", "aria-live": "off", "data-testid": `${id}-count` });
  const element = el("section", { class: "control", "data-control": id, "data-kind": "text", "aria-labelledby": `${id}-label` },
    title, caption, area, count, notice);
  area.setAttribute("aria-labelledby", `${id}-label`);
  const editor = new SharedTextEditor(room, id);
  let composing = false;
  area.addEventListener("compositionstart", () => { composing = true; });
  area.addEventListener("compositionend", () => { composing = false; editor.update(area.value); });
  area.addEventListener("input", () => { if (!composing) editor.update(area.value); });
  editor.addEventListener("error", (e) => reportError(e.detail, id));
  // Someone else's edit: the text changes under the cursor, which moves with the text around it.
  editor.addEventListener("change", (e) => {
    if (composing) return;
    const value = area.value, focused = document.activeElement === area;
    const start = codePoints(value.slice(0, area.selectionStart)), end = codePoints(value.slice(0, area.selectionEnd));
    const text = editor.text;
    if (text === value) return;
    area.value = text;
    if (focused) area.setSelectionRange(utf16Offset(text, e.detail.op.transformIndex(start)), utf16Offset(text, e.detail.op.transformIndex(end)));
  });
  return {
    element,
    editor,
    update(c) {
      title.textContent = c.label;
      area.maxLength = c.maxLength; // (UTF-16 units: the server counts code points, which are never more)
      if (!composing && document.activeElement !== area && area.value !== editor.text) area.value = editor.text;
      count.textContent = `${codePoints(editor.text).toLocaleString()} / ${c.maxLength.toLocaleString()} characters`;
      area.disabled = (room.state.presence?.[room.session]?.roles ?? []).includes("viewer");
    },
  };
}
