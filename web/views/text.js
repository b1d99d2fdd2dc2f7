// text: a shared note several people type into at once. Each keystroke is a splice the server transforms against what
// others typed meanwhile (ot.js); the textarea keeps its cursor where it was in the text when someone else's edit lands.
import { controlHeader, el, focusedNear, reportError } from "./common.js";
import { SharedTextEditor, TextOperation } from "../ot.js";

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
  let synced = ""; // the textarea's value when it last matched the editor's text
  /** Puts the editor's text in the textarea, the cursor moved by `op` (an edit of the textarea's value). */
  const show = (op) => {
    const value = area.value, text = editor.text, focused = focusedNear(area) === area;
    synced = text;
    if (text === value) return;
    const start = codePoints(value.slice(0, area.selectionStart)), end = codePoints(value.slice(0, area.selectionEnd));
    area.value = text;
    if (focused) area.setSelectionRange(utf16Offset(text, op.transformIndex(start)), utf16Offset(text, op.transformIndex(end)));
  };
  // An input method's composition (accents, CJK) is not touched while it runs; others' edits wait in the editor. At its
  // end, what was composed is transformed against them, so neither undoes the other.
  area.addEventListener("compositionstart", () => { composing = true; });
  area.addEventListener("compositionend", () => {
    composing = false;
    const before = Array.from(synced);
    const mine = TextOperation.diff(before, Array.from(area.value)), theirs = TextOperation.diff(before, Array.from(editor.text));
    const [mineOnTheirs, theirsOnMine] = TextOperation.transform(mine, theirs);
    editor.update(mineOnTheirs.apply(Array.from(editor.text)).join(""));
    show(theirsOnMine);
  });
  area.addEventListener("input", () => {
    if (composing) return;
    editor.update(area.value);
    synced = area.value;
  });
  editor.addEventListener("error", (e) => reportError(e.detail, id, room));
  // Someone else's edit (or a refusal's undo): the text changes under the cursor, which moves with the text around it.
  editor.addEventListener("change", (e) => { if (!composing) show(e.detail.op); });
  return {
    element,
    editor,
    update(c) {
      title.textContent = c.label;
      area.maxLength = c.maxLength; // (UTF-16 units: the server counts code points, which are never more)
      if (!composing && focusedNear(area) !== area && area.value !== editor.text) {
        area.value = editor.text;
        synced = editor.text;
      }
      count.textContent = `${codePoints(editor.text).toLocaleString()} / ${c.maxLength.toLocaleString()} characters`;
      area.disabled = (room.state.presence?.[room.session]?.roles ?? []).includes("viewer");
    },
  };
}
