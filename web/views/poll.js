// poll: a vote. Each member sees its own ballot and how many voted; the tally shows once someone reveals it (at once
// for the roles the poll names, a workshop's host). Options are toggle buttons: one choice (radio) or several.
import { act, confirmingButton, controlHeader, el, inlineForm, intentButton, missingRoles } from "./common.js";

const phaseWords = { open: "Open — votes are private until the tally is revealed", closed: "Closed — no more votes for now", revealed: "Revealed" };

export function pollView(room, id) {
  const [title, caption, notice] = controlHeader(id, "A vote: your choice is yours alone until the tally is revealed.");
  const phase = el("p", { class: "poll-phase", "data-testid": `${id}-phase` });
  const list = el("ul", { class: "poll-options", "data-testid": `${id}-options` });
  const voters = el("p", { class: "poll-voters", "aria-live": "polite", "data-testid": `${id}-voters` });
  const input = el("input", { type: "text", maxlength: "200", placeholder: "Another option", "aria-label": "Another option", "data-testid": `${id}-new` });
  const addForm = inlineForm("Add an option", input, "Add", (label) => act(room, id, "add", { label }).then((ack) => ack !== undefined));
  const close = intentButton(room, id, "close", "Close voting", undefined, { "data-testid": `${id}-close` });
  const open = intentButton(room, id, "open", "Reopen", undefined, { "data-testid": `${id}-open` });
  const reveal = intentButton(room, id, "reveal", "Reveal the tally", undefined, { "data-testid": `${id}-reveal` });
  const reset = confirmingButton("Start over", "Clear every vote?", () => act(room, id, "reset"));
  reset.dataset.testid = `${id}-reset`;
  const onlyFor = el("p", { class: "holding", "data-testid": `${id}-only` });
  const element = el("section", { class: "control", "data-control": id, "data-kind": "poll", "aria-labelledby": `${id}-label` },
    title, caption, phase, list, voters, addForm, el("div", { class: "poll-actions" }, close, open, reveal, reset), onlyFor, notice);
  const rows = new Map(); // option id → its row, kept across updates (focus stays on the button pressed)

  function row(option) {
    let r = rows.get(option.id);
    if (!r) {
      const button = el("button", { type: "button", class: "poll-choice", "data-option": option.id, "data-testid": `${id}-option-${option.id}` });
      const name = el("span", { class: "poll-label" });
      const bar = el("span", { class: "poll-bar", "aria-hidden": "true" });
      const count = el("span", { class: "poll-count" });
      button.append(el("span", { class: "poll-mark", "aria-hidden": "true" }), name, count, bar);
      button.addEventListener("click", () => act(room, id, button.getAttribute("aria-checked") === "true" ? "unvote" : "vote", { option: option.id }));
      r = { item: el("li", {}, button), button, name, bar, count };
      rows.set(option.id, r);
    }
    return r;
  }

  return {
    element,
    update(c) {
      title.textContent = c.label;
      const mine = c.ballots?.[room.session] ?? [];
      const tally = c.tally ?? null;
      const total = tally ? Object.values(tally).reduce((a, b) => a + b, 0) : 0;
      caption.textContent = c.mode === "multi"
        ? `A vote: choose up to ${c.maxVotes}. Your choices are yours alone until the tally is revealed.`
        : "A vote: choose one. Your choice is yours alone until the tally is revealed.";
      phase.textContent = phaseWords[c.phase] ?? c.phase;
      phase.dataset.phase = c.phase;
      const voting = c.phase === "open";
      const seen = new Set();
      const items = c.options.map((option) => {
        seen.add(option.id);
        const r = row(option);
        const chosen = mine.includes(option.id);
        r.name.textContent = option.label;
        r.button.setAttribute("role", c.mode === "multi" ? "checkbox" : "radio");
        r.button.setAttribute("aria-checked", String(chosen));
        r.button.disabled = !voting;
        const votes = tally?.[option.id];
        r.count.textContent = votes === undefined ? "" : `${votes}`;
        r.bar.style.width = votes === undefined || total === 0 ? "0" : `${(votes / total) * 100}%`;
        r.button.setAttribute("aria-label", `${option.label}${chosen ? ", your choice" : ""}${votes === undefined ? "" : `, ${votes} vote${votes === 1 ? "" : "s"}`}`);
        return r.item;
      });
      for (const key of [...rows.keys()]) if (!seen.has(key)) rows.delete(key);
      list.replaceChildren(...items);
      list.classList.toggle("tallied", tally !== null);
      voters.textContent = `${c.voters === 0 ? "Nobody has" : c.voters === 1 ? "1 person has" : `${c.voters} people have`} voted`
        + (mine.length ? " — you included" : "") + (tally && c.phase !== "revealed" ? ". You see the tally: the others do not yet." : "");
      addForm.hidden = !c.allowAdd || !voting;
      const missing = (intent) => missingRoles(room, id, intent);
      close.hidden = c.phase !== "open";
      open.hidden = c.phase !== "closed";
      reveal.hidden = c.phase === "revealed";
      close.disabled = missing("close") !== null;
      open.disabled = missing("open") !== null;
      reveal.disabled = missing("reveal") !== null;
      reset.disabled = missing("reset") !== null;
      const needed = missing("reveal") ?? missing("close");
      onlyFor.textContent = needed ? `Only ${needed.join(" or ")} can close, reveal or restart this vote.` : "";
    },
  };
}
