// A page script against web/elements.d.ts (the LiveControls elements): `tsc --noEmit` must accept it and reject each
// line marked @ts-expect-error.
import type { LcErrorDetail } from "../../web/elements.js";

const roomElement = document.querySelector("lc-room");
roomElement?.addEventListener("lc-status", (event) => console.log(event.detail.status));
void roomElement?.liveRoom?.undo();

const stepper = document.querySelector("lc-stepper");
stepper?.addEventListener("lc-change", (event) => console.log(event.detail.control, event.detail.state["value"]));

document.addEventListener("lc-error", (event) => {
  const detail: LcErrorDetail = event.detail;
  console.warn(detail.control ?? "the room", detail.code, detail.message);
});

// @ts-expect-error the room's client is read-only
if (roomElement) roomElement.liveRoom = null;
// @ts-expect-error an error's code is a string
document.addEventListener("lc-error", (event) => { const code: number = event.detail.code; console.log(code); });
