// wizard (StepView): the steps with the current one marked, the phase, and next / back / reset.
import { el, intentButton } from "./common.js";

const phaseText = { start: "Not started", inProgress: "In progress", complete: "Complete", exit: "Exited" };

export function wizardView(room, id) {
  const title = el("h2");
  const phase = el("p", { class: "phase", "aria-live": "polite", "data-testid": `${id}-phase` });
  const steps = el("ol", { class: "steps" });
  const back = intentButton(room, id, "prev", "Back");
  const next = intentButton(room, id, "next", "Next");
  const reset = intentButton(room, id, "reset", "Reset");
  const element = el("section", { class: "control", "data-control": id, "data-kind": "wizard" },
    title, phase, steps, el("div", { class: "actions" }, back, next, reset));
  return {
    element,
    update(c) {
      title.textContent = c.label;
      phase.textContent = `${phaseText[c.phase] ?? c.phase} · step ${c.index + 1} of ${c.count}: ${c.title}`;
      phase.dataset.phase = c.phase;
      const final = c.phase === "complete" || c.phase === "exit";
      back.disabled = final;
      next.disabled = final;
      steps.replaceChildren(...c.steps.map((s, i) => el("li", {
        class: i === c.index ? "current" : i < c.index ? "done" : null,
        "aria-current": i === c.index ? "step" : null,
      }, s.title, s.guard ? el("span", { class: "guard" }, ` (needs ${s.guard.element ?? s.guard.form})`) : null)));
    },
  };
}
