"""ToolGrid: a multi-turn tool-calling environment small enough for a tiny transformer on CPU.

Each episode offers a few tools whose names are bound at random to arithmetic functions
(`add=zop neg=kav ...`, listed in the system message). The user makes sequential requests
(`add 3 4`); the agent must call the tool bound to that function with JSON arguments
(`{"a":3,"b":4}`), read the result, and answer it; then the next request comes. A call to a
name that is not offered returns "Tool not found: NAME", malformed arguments return
"Invalid arguments: ...". The reward is sparse: 1 if every request was answered correctly
within the turn budget (two assistant turns per request plus `slack`), else 0.

Registries (name -> function bindings) for training and for held-out evaluation are drawn
from disjoint lists, so evaluation measures reading the tool list, not memorizing it.
`demonstration` writes scripted, noisy demonstrations for the warm start: each call message
first says which binding it uses (`add=zop`, then the call; a tiny model learns this lookup
far faster than a call without it), some calls go to a wrong name or with wrong arguments
and are then corrected, and some turns are preceded by a hint (in the detectors' own words)
and followed by the right action.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field

from etude.rl.feedback.detectors import invalid_arguments_text, not_found_text
from etude.rl.trajectory import Message, Trajectory

FUNCTIONS: dict[str, tuple[int, object]] = {
    "add": (2, lambda a, b: a + b),
    "sub": (2, lambda a, b: a - b),
    "mul": (2, lambda a, b: a * b),
    "max": (2, max),
    "min": (2, min),
    "neg": (1, lambda a: -a),
    "sq": (1, lambda a: a * a),
    "inc": (1, lambda a: a + 1),
}
# fmt: off
NAMES = (
    "zop", "kav", "qix", "wem", "dul", "fen", "gor", "hib", "jat", "lum",
    "mek", "nop", "pav", "ruk", "sil", "tov", "vex", "wib", "yad", "zun",
)
# fmt: on
ARGS = ("a", "b")


@dataclass(frozen=True)
class Registry:
    """The tools of one episode: (name, function) pairs."""

    tools: tuple[tuple[str, str], ...]

    def function_of(self, name: str) -> str | None:
        return dict(self.tools).get(name)

    def name_of(self, function: str) -> str:
        return {f: n for n, f in self.tools}[function]

    def binding(self, function: str) -> str:
        """`mul=pav`: the function first, as the name is looked up by it."""
        return f"{function}={self.name_of(function)}"

    def listing(self) -> str:
        """Every binding, space-separated: `add=zop neg=kav`."""
        return " ".join(self.binding(f) for _, f in self.tools)

    def system_prompt(self) -> str:
        return "tools: " + self.listing()

    def specs(self) -> list[dict]:
        """OpenAI tool specs (description = the bound function)."""
        out = []
        for name, fn in self.tools:
            args = ARGS[: FUNCTIONS[fn][0]]
            params = {
                "type": "object",
                "properties": {a: {"type": "integer"} for a in args},
                "required": list(args),
            }
            out.append(
                {
                    "type": "function",
                    "function": {"name": name, "description": fn, "parameters": params},
                }
            )
        return out


def registries(
    seed: int, count: int, n_tools: int, exclude: set[Registry] | None = None
) -> list[Registry]:
    """`count` distinct random registries of `n_tools` tools, none in `exclude`."""
    rng = random.Random(seed)
    out: list[Registry] = []
    seen = set(exclude or ())
    while len(out) < count:
        reg = random_registry(rng, n_tools, seen)
        seen.add(reg)
        out.append(reg)
    return out


def random_registry(rng: random.Random, n_tools: int, exclude: set[Registry]) -> Registry:
    """A random registry of `n_tools` tools (distinct functions, distinct names) not in
    `exclude`."""
    while True:
        fns = rng.sample(sorted(FUNCTIONS), n_tools)
        names = rng.sample(NAMES, n_tools)
        reg = Registry(tuple(zip(names, fns)))
        if reg not in exclude:
            return reg


def split_registries(
    seed: int, n_train: int, n_heldout: int, n_tools: int
) -> tuple[list[Registry], list[Registry]]:
    """Disjoint training and held-out registry lists."""
    train = registries(seed, n_train, n_tools)
    return train, registries(seed + 1, n_heldout, n_tools, exclude=set(train))


@dataclass(frozen=True)
class Request:
    function: str
    args: tuple[int, ...]

    def text(self) -> str:
        return " ".join([self.function, *map(str, self.args)])

    def answer(self) -> int:
        return FUNCTIONS[self.function][1](*self.args)


@dataclass(frozen=True)
class Task:
    registry: Registry
    requests: tuple[Request, ...]
    task_id: str


def sample_task(registry: Registry, n_requests: int, rng: random.Random, task_id: str = "") -> Task:
    """Requests on functions of `registry` with digit arguments."""
    reqs = []
    for _ in range(n_requests):
        fn = rng.choice([f for _, f in registry.tools])
        reqs.append(Request(fn, tuple(rng.randint(0, 9) for _ in range(FUNCTIONS[fn][0]))))
    return Task(registry, tuple(reqs), task_id)


def call_message(name: str, args: dict, call_id: str, content: str | None = None) -> Message:
    """An assistant message with one tool call (compact JSON arguments)."""
    arguments = json.dumps(args, separators=(",", ":"))
    return {
        "role": "assistant",
        "content": content,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        ],
    }


def run_tool(registry: Registry, name: str, arguments: str) -> str:
    """The tool's reply to a call: the result, or an error message."""
    fn = registry.function_of(name)
    if fn is None:
        return f"Tool not found: {name}"
    arity = FUNCTIONS[fn][0]
    try:
        args = json.loads(arguments)
    except json.JSONDecodeError:
        return "Invalid arguments: not JSON"
    want = list(ARGS[:arity])
    if (
        not isinstance(args, dict)
        or sorted(args) != want
        or not all(isinstance(args[a], int) for a in want)
    ):
        return f"Invalid arguments: expected {', '.join(want)}"
    return str(FUNCTIONS[fn][1](*(args[a] for a in want)))


@dataclass
class Episode:
    """One task being played. `messages` grows as the agent acts (`step`)."""

    task: Task
    slack: int = 0
    messages: list[Message] = field(default_factory=list)
    answers: list[bool] = field(default_factory=list)
    done: bool = False

    def __post_init__(self):
        self.messages = [
            {"role": "system", "content": self.task.registry.system_prompt()},
            {"role": "user", "content": self.task.requests[0].text()},
        ]

    @property
    def budget(self) -> int:
        return 2 * len(self.task.requests) + self.slack

    def assistant_turns(self) -> int:
        return sum(m["role"] == "assistant" for m in self.messages)

    def step(self, message: Message) -> None:
        """Apply the agent's message: run its tool calls, or take its content as the answer to
        the current request and move to the next."""
        if self.done:
            raise RuntimeError("episode is over")
        calls = message.get("tool_calls") or []
        for k, call in enumerate(calls):  # ids unique in the episode (they are not rendered)
            call["id"] = f"call_{len(self.messages)}_{k}"
        self.messages.append(message)
        if calls:
            for call in calls:
                fn = call["function"]
                reply = run_tool(self.task.registry, fn["name"], fn.get("arguments", ""))
                self.messages.append({"role": "tool", "tool_call_id": call["id"], "content": reply})
        else:
            request = self.task.requests[len(self.answers)]
            self.answers.append((message.get("content") or "").strip() == str(request.answer()))
            if len(self.answers) == len(self.task.requests):
                self.done = True
            else:
                self.messages.append(
                    {"role": "user", "content": self.task.requests[len(self.answers)].text()}
                )
        if self.assistant_turns() >= self.budget:
            self.done = True

    @property
    def reward(self) -> float:
        ok = len(self.answers) == len(self.task.requests) and all(self.answers)
        return 1.0 if ok else 0.0

    def trajectory(self) -> Trajectory:
        return Trajectory(
            messages=self.messages,
            tools=self.task.registry.specs(),
            task_id=self.task.task_id,
            reward=self.reward,
            metadata={"expected_turns": 2 * len(self.task.requests)},
        )


def tool_errors(traj: Trajectory) -> tuple[int, int]:
    """(calls answered "Tool not found" or "Invalid arguments", all calls)."""
    errors = calls = 0
    for m in traj.messages:
        if m["role"] == "tool":
            calls += 1
            errors += m["content"].startswith(("Tool not found", "Invalid arguments"))
    return errors, calls


def lookup_drill(
    registry: Registry, rng: random.Random, requests: int = 8, p_hint: float = 0.0
) -> list[Message]:
    """The lookup alone: the tool list, then `requests` user messages naming a function, each
    answered by its binding (`mul=pav`), as a call message begins; with probability `p_hint`
    the tool-not-found hint naming that binding comes first (`... Did you mean mul=pav?`).
    A warm start that mixes these into its batches learns to look names up
    (benchmarks/toolgrid_warm_start.py) and to take them from a hint."""
    messages: list[Message] = [{"role": "system", "content": registry.system_prompt()}]
    for _ in range(requests):
        fn = rng.choice([f for _, f in registry.tools])
        binding = registry.binding(fn)
        messages.append({"role": "user", "content": fn})
        if rng.random() < p_hint:
            wrong = rng.choice([n for n in NAMES if registry.function_of(n) is None])
            hint = not_found_text(wrong, registry.listing(), binding)
            messages.append({"role": "user", "content": hint})
        messages.append({"role": "assistant", "content": binding})
    return messages


def demonstration(task: Task, rng: random.Random, p_error: float, p_hint: float) -> list[Message]:
    """A scripted demonstration of `task`. Before each call, with probability `p_hint` a hint
    message (the detectors' wording) precedes the right call; otherwise with probability
    `p_error` a wrong call (unknown name, or wrong arguments) comes first, gets its error,
    and is corrected. Hints are user messages, as the teacher sees them."""
    reg = task.registry
    msgs: list[Message] = [{"role": "system", "content": reg.system_prompt()}]
    for i, req in enumerate(task.requests):
        msgs.append({"role": "user", "content": req.text()})
        name = reg.name_of(req.function)
        args = dict(zip(ARGS, req.args))
        wrong_name = rng.choice([n for n in NAMES if reg.function_of(n) is None])
        if rng.random() < p_hint:
            if rng.random() < 0.5:
                text = not_found_text(wrong_name, reg.listing(), reg.binding(req.function))
            else:
                text = invalid_arguments_text(
                    name, f"missing {ARGS[len(args) - 1]}", ", ".join(args)
                )
            msgs.append({"role": "user", "content": text})
        elif rng.random() < p_error:
            if rng.random() < 0.5:
                bad = call_message(wrong_name, args, f"e{i}", f"{req.function}={wrong_name}")
            else:
                short = dict(list(args.items())[:-1])
                bad = call_message(name, short, f"e{i}", reg.binding(req.function))
            fn = bad["tool_calls"][0]["function"]
            msgs += [
                bad,
                {
                    "role": "tool",
                    "tool_call_id": f"e{i}",
                    "content": run_tool(reg, fn["name"], fn["arguments"]),
                },
            ]
        msgs.append(call_message(name, args, f"c{i}", reg.binding(req.function)))
        msgs.append({"role": "tool", "tool_call_id": f"c{i}", "content": str(req.answer())})
        msgs.append({"role": "assistant", "content": str(req.answer())})
    return msgs
