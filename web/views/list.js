// list (ArrayStepper): the selected item with ‹ › hold buttons, every value grouped by section with move and
// remove buttons, and a box to add a value at a position.
import { act, controlHeader, el, focusedNear, holdButton, holdingText, inlineForm, syncPressed } from "./common.js";

/** A typed value: JSON when it parses (`{"name": "Ann"}`, `42`), else the text itself. */
function parseValue(text) {
  try { return JSON.parse(text); } catch { return text; }
}

/** A label cut to fit a menu. */
function shortened(text, max = 32) {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function listView(room, id) {
  const [title, caption, notice] = controlHeader(id, "A shared list: pick an item, hold ‹ › to step through, add, move or remove items.");
  const current = el("output", { "aria-labelledby": `${id}-label`, "aria-live": "polite", "data-testid": `${id}-value` });
  const prev = holdButton(room, id, "prev", "‹", "Previous item");
  const next = holdButton(room, id, "next", "›", "Next item");
  const holding = el("p", { class: "holding" });
  const sections = el("div", { class: "sections" });
  const input = el("input", { type: "text", "aria-label": "New item", placeholder: "New item", "data-testid": `${id}-new` });
  const where = el("select", { "aria-label": "Where", "data-testid": `${id}-where` });
  let flatIDs = [];
  const add = inlineForm("Add an item", input, "Add", (text) => {
    const value = parseValue(text);
    // "before X" means before that item where it is now (others may have inserted or removed items meanwhile);
    // "at the end of S" appends to that section (the protocol's `append` with `section`).
    if (where.value.startsWith("end:")) return act(room, id, "append", { value, section: where.value.slice(4) });
    const before = where.value === "" ? -1 : flatIDs.indexOf(where.value);
    return before < 0 ? act(room, id, "append", { value }) : act(room, id, "insert", { value, index: before });
  });
  add.prepend(where);
  const element = el("section", { class: "control", "data-control": id, "data-kind": "list", "aria-labelledby": `${id}-label` },
    title, caption, el("div", { class: "stepper" }, prev, current, next), holding, sections, add, notice);
  const iconButton = (text, label, onClick, action) => {
    const b = el("button", { type: "button", class: "icon", "aria-label": label, title: label, "data-action": action }, text);
    b.addEventListener("click", (e) => { e.stopPropagation(); onClick(); });
    return b;
  };
  // Disabled at the top of the first section and the bottom of the last: there is nowhere further to go.
  const moveButton = (text, label, item, to) => {
    const b = iconButton(text, label, () => act(room, id, "move", { id: item.id, ...to }), text === "↑" ? "up" : "down");
    b.disabled = to === null;
    return b;
  };
  const removeButton = (item, keep) => {
    const b = iconButton("×", keep ? `Select another item to remove ${item.label}` : `Remove ${item.label}`, () => act(room, id, "remove", { id: item.id }), "remove");
    b.disabled = keep; // selectionPolicy "fail": the selected item stays until another is selected
    return b;
  };
  return {
    element,
    update(c) {
      title.textContent = c.label;
      current.textContent = c.selectedLabel ?? "—";
      prev.disabled = !c.canPrev;
      next.disabled = !c.canNext;
      syncPressed(room, c.holding, prev, next);
      holding.textContent = holdingText(room, c.holding, "›", "‹");
      // Focus stays on the item it was on (or on the same button of it: ↑ pressed twice moves twice), as the list is
      // drawn again.
      const withFocus = focusedNear(sections), active = sections.contains(withFocus) ? withFocus : null;
      const focused = active?.closest("li[data-item]")?.dataset.item ?? null;
      const focusedAction = active?.dataset.action ?? null;
      const flat = c.sections.flatMap((s) => s.items);
      // One step up or down, as shown: past the neighbour in its section, or from a section's end into the next
      // section's start (and back). `move` with `section` counts in that section, so every place is reachable.
      const step = (s, i, by) => {
        const items = c.sections[s].items;
        if (i + by >= 0 && i + by < items.length) return { section: c.sections[s].id, index: i + by };
        const t = s + by;
        if (t < 0 || t >= c.sections.length) return null;
        return { section: c.sections[t].id, index: by > 0 ? 0 : c.sections[t].items.length };
      };
      sections.replaceChildren(...c.sections.map((section, s) => {
        // A plain list: each item is a button that selects it (the current one marked), then its own buttons — an
        // ARIA option may not hold buttons, and screen readers read such an option as one run-on name.
        const items = el("ul", { "aria-label": section.header || c.label });
        for (const [i, item] of section.items.entries()) {
          const up = step(s, i, -1), down = step(s, i, 1);
          const selected = item.id === c.selected;
          const claim = c.claims?.[item.id];
          const select = el("button", { type: "button", class: "item-select", "data-action": "select", "aria-current": selected ? "true" : null,
            title: item.label.length > 80 ? item.label : null }, el("span", { class: "item-label" }, item.label));
          const option = el("li", { class: selected ? "item selected" : "item", "data-item": item.id }, select,
            claim && claim.session !== room.session ? el("span", { class: "editor" }, " (being edited)") : null,
            el("span", { class: "item-actions" },
              moveButton("↑", `Move ${item.label} up`, item, up),
              moveButton("↓", `Move ${item.label} down`, item, down),
              removeButton(item, selected && c.selectionPolicy === "fail" && flat.length > 1)));
          // A row marked disabled (a viewer's) sends nothing, whatever part of it is clicked.
          const choose = () => { if (option.getAttribute("aria-disabled") !== "true") act(room, id, "select", { id: item.id }); };
          option.addEventListener("click", choose);  // the row, its select button's click (Enter, Space) included
          items.append(option);
        }
        if (section.items.length === 0) items.append(el("li", { class: "empty" }, "(empty)"));
        return el("div", { class: "section" }, section.header ? el("h3", {}, section.header) : null, items);
      }));
      // Options name items, not positions: a choice stays with its item as the list changes (and goes if it is removed).
      const chosen = where.value;
      flatIDs = flat.map((item) => item.id);
      // With several sections, the end of each is a place too ("" stays the end of the last, the default).
      const ends = c.sections.length > 1
        ? c.sections.map((sec, i) => el("option", { value: i === c.sections.length - 1 ? "" : `end:${sec.id}` },
            `at the end of ${shortened(sec.header || sec.id)}`))
        : [el("option", { value: "" }, "at the end")];
      where.replaceChildren(...ends, ...flat.map((item) => el("option", { value: item.id }, `before ${shortened(item.label)}`)));
      const places = new Set([...flatIDs, ...c.sections.slice(0, -1).map((sec) => `end:${sec.id}`)]);
      where.value = places.has(chosen) ? chosen : "";
      if (focused) {
        const row = sections.querySelector(`[data-item="${CSS.escape(focused)}"]`);
        const button = focusedAction ? row?.querySelector(`[data-action="${focusedAction}"]`) : null;
        (button && !button.disabled ? button : row)?.focus();
      }
    },
  };
}
