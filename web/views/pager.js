// pager (InfiniteScrollViews): the position — a month as a calendar grid — with ‹ › hold buttons and
// the neighbouring positions from `window` to jump to.
import { act, controlHeader, el, focusedNear, holdButton, holdingText, inlineForm, intentButton, syncPressed } from "./common.js";

const weekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

function monthGrid(position) {
  const [year, month] = position.split("-").map(Number);
  const first = new Date(Date.UTC(year, month - 1, 1));
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const offset = (first.getUTCDay() + 6) % 7; // Monday first
  const table = el("table", { class: "calendar", "aria-label": position });
  table.append(el("thead", {}, el("tr", {}, ...weekdays.map((d) => el("th", { scope: "col" }, d)))));
  const body = el("tbody");
  let row = el("tr");
  for (let i = 0; i < offset; i++) row.append(el("td"));
  const now = new Date();
  const today = now.getFullYear() === year && now.getMonth() === month - 1 ? now.getDate() : 0;
  for (let day = 1; day <= days; day++) {
    row.append(day === today ? el("td", { class: "today", "aria-current": "date", title: "today" }, String(day)) : el("td", {}, String(day)));
    if ((offset + day) % 7 === 0) { body.append(row); row = el("tr"); }
  }
  if (row.children.length) body.append(row);
  table.append(body);
  return table;
}

function label(domain, position) {
  if (domain === "month") {
    const [y, m] = position.split("-").map(Number);
    return new Date(Date.UTC(y, m - 1, 1)).toLocaleDateString(undefined, { month: "long", year: "numeric", timeZone: "UTC" });
  }
  return String(position);
}

/** An input for any position of the domain: a month picker, a date picker, or a number. */
function positionInput(id, domain) {
  const type = domain === "month" ? "month" : domain === "day" ? "date" : "number";
  return el("input", { type, "aria-label": "Go to", "data-testid": `${id}-goto`, required: true });
}

export function pagerView(room, id) {
  const [title, caption, notice] = controlHeader(id, "Pages everyone browses together: step, hold to scroll, or go to any page.");
  const current = el("output", { "aria-labelledby": `${id}-label`, "aria-live": "polite", "data-testid": `${id}-value` });
  const prev = holdButton(room, id, "prev", "‹", "Previous");
  const next = holdButton(room, id, "next", "›", "Next");
  const holding = el("p", { class: "holding" });
  const neighbours = el("div", { class: "window", role: "group", "aria-label": "Nearby" });
  const body = el("div", { class: "page" });
  const refresh = intentButton(room, id, "refresh", "Refresh for everyone");
  const generation = el("span", { class: "generation", "data-testid": `${id}-generation` });
  let input = null;
  const goto = el("div", { class: "goto" });
  const element = el("section", { class: "control", "data-control": id, "data-kind": "pager", "aria-labelledby": `${id}-label` },
    title, caption, el("div", { class: "stepper" }, prev, current, next), holding, neighbours, body, goto,
    el("div", { class: "actions" }, refresh, generation), notice);
  let shown = null;
  return {
    element,
    update(c) {
      title.textContent = c.label;
      current.textContent = label(c.domain, c.position);
      current.dataset.position = c.position;
      prev.disabled = !c.canPrev;
      next.disabled = !c.canNext;
      syncPressed(room, c.holding, prev, next);
      holding.textContent = holdingText(room, c.holding, "›", "‹");
      if (!input) {
        input = positionInput(id, c.domain);
        // The box keeps what was typed (the page it goes to), rather than emptying itself as an add box does.
        goto.append(inlineForm("Go to a page", input, "Go", (v) => act(room, id, "goto", { position: c.domain === "integer" ? Number(v) : v }).then(() => false)));
      }
      // The box shows the current page (an empty month field would show only dashes), except while someone types in it.
      if (focusedNear(input) !== input) input.value = c.position;
      if (c.min !== null) input.min = c.min;
      if (c.max !== null) input.max = c.max;
      generation.textContent = c.generation ? `refreshed ${c.generation === 1 ? "once" : `${c.generation} times`}` : "";
      neighbours.replaceChildren(...c.window.map((p) => {
        const b = el("button", { type: "button", class: p === c.position ? "text current" : "text", "aria-pressed": String(p === c.position) }, label(c.domain, p));
        b.addEventListener("click", () => act(room, id, "goto", { position: p }));
        return b;
      }));
      if (shown !== `${c.position}/${c.generation}`) {
        shown = `${c.position}/${c.generation}`; // a refresh reloads what is shown
        body.replaceChildren(c.domain === "month" ? monthGrid(c.position) : el("p", { class: "big" }, label(c.domain, c.position)));
      }
    },
  };
}
