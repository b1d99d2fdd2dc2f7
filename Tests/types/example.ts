// A small typed page script against web/livecontrols.d.ts: `tsc --noEmit` (Tests/types/tsconfig.json) must accept it,
// and reject each line marked @ts-expect-error (the declarations are strict where it matters).
import { LiveRoom, applyPatch, type JSONValue, type LiveRoomError, type Person } from "../../web/livecontrols.js";

const room = new LiveRoom({ room: "demo", name: "Ann" });
const inNode = new LiveRoom({ url: "ws://127.0.0.1:8080/ws", WebSocket: globalThis.WebSocket });
inNode.close();

room.addEventListener("state", (event) => {
  const state = room.state;
  if (!state) return;
  const quantity = state.controls["quantity"];
  const value: JSONValue = quantity?.["value"] ?? null;
  const who: string[] = Object.values(state.presence).map((member) => member.name ?? member.user ?? "Guest");
  if (event.detail.reason === "patch") console.log(event.detail.patch.version, value, who);
});

room.addEventListener("broadcast", (event) => {
  const { from, name, event: payload } = event.detail;
  console.log(`${name ?? from} sent`, payload);
});

room.addEventListener("status", (event) => {
  if (event.detail.status === "open") void room.setPresence({ focus: "quantity", color: null });
});

async function press(): Promise<number> {
  try {
    const ack = await room.intent("quantity", "set", { value: 3 });
    await room.broadcast({ reaction: "👍" });
    return ack.version;
  } catch (error) {
    const refusal = error as LiveRoomError;
    if (refusal.code === "denied") console.warn(refusal.reason, refusal.message);
    return -1;
  }
}

room.addEventListener("undoable", (event) => {
  const { undo, redo } = event.detail;
  console.log(`undo ${undo}, redo ${redo}`, room.canUndo ?? 0);
});

async function undoLast(): Promise<string> {
  try {
    await room.undo();
    await room.redo();
    return "ok";
  } catch (error) {
    const refusal = error as LiveRoomError;
    return refusal.code === "conflict" ? `changed since by ${refusal.by?.name ?? refusal.by?.session ?? "someone"}` : refusal.code;
  }
}
void undoLast();

const people: Person[] = room.people();
const doc = applyPatch<JSONValue>({ a: 1 }, [{ op: "replace", path: "/a", value: 2 }]);
void press();
void people;
void doc;

// @ts-expect-error an intent's args are an object
void room.intent("quantity", "set", 3);
// @ts-expect-error an unknown status
room.addEventListener("status", (event) => { if (event.detail.status === "gone") return; });
// @ts-expect-error a remove has no value
applyPatch<JSONValue>({}, [{ op: "remove", path: "/a", value: 1 }]);
// @ts-expect-error the state is read-only
room.state = null;
// @ts-expect-error undo takes no arguments
void room.undo("quantity");
