// list (ArrayStepper): the selected item with ‹ › hold buttons, and every value grouped by section.
import { act, el, holdButton, holdingText } from "./common.js";

export function listView(room, id) {
  const title = el("h2", { id: `${id}-label` });
  const current = el("output", { "aria-labelledby": `${id}-label`, "aria-live": "polite", "data-testid": `${id}-value` });
  const prev = holdButton(room, id, "prev", "‹", "Previous item");
  const next = holdButton(room, id, "next", "›", "Next item");
  const holding = el("p", { class: "holding" });
  const sections = el("div", { class: "sections" });
  const element = el("section", { class: "control", "data-control": id, "data-kind": "list" },
    title, el("div", { class: "stepper" }, prev, current, next), holding, sections);
  return {
    element,
    update(c) {
      title.textContent = c.label;
      current.textContent = c.selectedLabel ?? "—";
      prev.disabled = !c.canPrev;
      next.disabled = !c.canNext;
      holding.textContent = holdingText(room, c.holding, "›", "‹");
      const focused = sections.contains(document.activeElement) ? document.activeElement.dataset.item : null;
      sections.replaceChildren(...c.sections.map((section) => {
        const items = el("ul", { role: "listbox", "aria-label": section.header || c.label });
        for (const item of section.items) {
          const selected = item.id === c.selected;
          const option = el("li", { role: "option", tabindex: "0", "aria-selected": String(selected), "data-item": item.id,
            class: selected ? "selected" : null }, item.label);
          const choose = () => act(room, id, "select", { id: item.id });
          option.addEventListener("click", choose);
          option.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); choose(); } });
          items.append(option);
        }
        if (section.items.length === 0) items.append(el("li", { class: "empty" }, "(empty)"));
        return el("div", { class: "section" }, section.header ? el("h3", {}, section.header) : null, items);
      }));
      if (focused) sections.querySelector(`[data-item="${focused}"]`)?.focus();
    },
  };
}
