"""opencode, Pi and Claude Code 2.1.330's survey/diff/editor recordings (issue 25). Imported by scenarios.py."""
import json
import os

from scenarios import SPECS, L, c_prompt, text_turn, tool_turn, LOREM

AG = os.path.expanduser("~/.cache/hm-agents")
BASE_PATH = "/usr/local/bin:/usr/bin:/bin"

# ----------------------------------------------------------------- opencode
OC_ENV = {"PATH": AG + "/opencode/node_modules/.bin:" + BASE_PATH,
          "ANTHROPIC_API_KEY": "sk-ant-mock-0123456789abcdefghij",
          "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
          "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1"}


def oc_seed(perm=None):
    def setup(ctx):
        d = os.path.join(ctx["home"], ".config", "opencode")
        os.makedirs(d, exist_ok=True)
        cfg = {"$schema": "https://opencode.ai/config.json",
               "model": "anthropic/claude-sonnet-4-5", "autoupdate": False, "share": "disabled",
               "provider": {"anthropic": {"options": {"baseURL": "http://127.0.0.1:%d/v1" % ctx["port"],
                                                      "apiKey": "sk-ant-mock-0123456789abcdefghij"}}},
               "permission": perm or {"bash": "ask", "edit": "ask"}}
        json.dump(cfg, open(os.path.join(d, "opencode.json"), "w"), indent=1)
        open(os.path.join(ctx["proj"], "hello.py"), "w").write('print("hello")\n')
        import subprocess
        subprocess.run(["git", "init", "-q", ctx["proj"]], check=True)
    return setup


OC = {"cli": "opencode", "argv": ["opencode"], "env": OC_ENV}


O_READY = r"Ask anything"
O_WORK = r"esc (?:again to )?interrupt"


def o_start():
    # Slow to start here (10-20 s): the logo and the composer come last.
    return [("wait", O_READY, 120, L("ready", "prompt")), ("sleep", 3)]


def o_answer_end(n, idle=6):
    return [("wait_ev", "first_content", n, 90, L("working", "responding")),
            # Its footer keeps `esc interrupt` for up to a second after the stream ends.
            ("wait_ev", "stream_end", n, 120, L("working", "finishing")),
            ("wait_gone", O_WORK, 20, L("ready", "prompt")), ("sleep", idle)]


def o_exit():
    return [("send", "\x03", L("transition", "exiting")), ("wait_exit", 20)]


SPECS["opencode_bash_permission"] = dict(OC, setup=oc_seed(),
    description="bash tool -> 'Permission required' (held 8s) -> Enter (allow once) -> loop runs -> answer; "
                "again -> dialog (held 8s) -> Esc (reject; the turn ends) -> prompt; ctrl-c",
    turns=[tool_turn("bash", {"command": "for i in 1 2 3 4; do echo step $i; sleep 1; done", "description": "Run the loop"}),
           text_turn("The loop ran four steps.", pre=1.5),
           tool_turn("bash", {"command": "rm -rf build && make all", "description": "Clean and rebuild"})],
    steps=o_start() + c_prompt("run the loop") +
          [("wait_ev", "stream_end", 1, 90, L("working", "tool_pending")),
           ("wait", r"Permission required", 60, L("needs_input", "permission")), ("sleep", 8),
           ("send", "\r", L("working", "tool_running")),
           ("wait_ev", "req", 2, 60, L("working", "thinking"))] + o_answer_end(2, idle=5) +
          c_prompt("now rebuild from scratch") +
          [("wait_ev", "stream_end", 3, 90, L("working", "tool_pending")),
           ("wait", r"Permission required", 60, L("needs_input", "permission")), ("sleep", 8),
           ("send", "\x1b", L("transition", "answered")), ("wait", O_WORK, 3),
           ("wait_gone", O_WORK, 20, L("ready", "prompt")), ("sleep", 6)] + o_exit())

SPECS["opencode_question_interrupt_error"] = dict(OC, setup=oc_seed(),
    description="question tool -> 'Which greeting...' (held 8s) -> Down, Enter -> answer; a 25 s silent think "
                "interrupted with Esc Esc -> prompt; then HTTP 400 -> error shown -> prompt; ctrl-c",
    turns=[tool_turn("question", {"questions": [{"question": "Which greeting should hello.py print?", "header": "Greeting",
               "options": [{"label": "Hello, world", "description": "The classic greeting"},
                           {"label": "Hi there", "description": "A casual greeting"}]}]}),
           text_turn("Great, I will use the casual greeting.", pre=1.5),
           text_turn(LOREM, pre=0.5, head=25, cd=0.1),
           {"kind": "error", "status": 400, "error_message": "mock: invalid request parameter",
            "error_type": "invalid_request_error", "pre_delay": 1}],
    steps=o_start() + c_prompt("change the greeting, ask me which one") +
          [("wait_ev", "stream_end", 1, 90, L("working", "tool_pending")),
           ("wait", r"Which greeting should hello.py print\?", 60, L("needs_input", "question")), ("sleep", 6),
           ("send", "\x1b[B"), ("sleep", 2), ("send", "\r", L("working", "answer_submitted")), ("sleep", 0.3),
           ("wait_ev", "req", 2, 60, L("working", "thinking"))] + o_answer_end(2, idle=5) +
          c_prompt("think about this for a while") +
          [("wait_ev", "req", 3, 90), ("sleep", 5), ("send", "\x1b"), ("wait", r"esc again to interrupt", 10),
           ("sleep", 0.5), ("send", "\x1b", L("transition", "interrupting")),
           ("wait_gone", O_WORK, 20, L("ready", "prompt_interrupted")), ("sleep", 5)] +
          c_prompt("second question") +
          [("wait", r"invalid request parameter", 90, L("ready", "prompt_after_error")), ("sleep", 8)] + o_exit())

# ----------------------------------------------------------------------- Pi
# Pi 0.73.1 has no permission or question dialogs (its README: "No permission popups"); it sends
# OSC 9;4;3 (indeterminate progress) while a turn runs and OSC 9;4;0 after, and no OSC 7501.
PI_ENV = {"PATH": AG + "/pi/node_modules/.bin:" + BASE_PATH, "ANTHROPIC_API_KEY": "sk-ant-mock-0123456789abcdefghij",
          "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"}


def pi_seed(ctx):
    d = os.path.join(ctx["home"], ".pi", "agent")
    os.makedirs(d, exist_ok=True)
    json.dump({"providers": {"anthropic": {"baseUrl": "http://127.0.0.1:%d" % ctx["port"]}}},
              open(os.path.join(d, "models.json"), "w"))
    json.dump({"defaultProvider": "anthropic", "defaultModel": "claude-sonnet-4-5", "theme": "dark"},
              open(os.path.join(d, "settings.json"), "w"))
    open(os.path.join(ctx["proj"], "hello.py"), "w").write('print("hello")\n')


PI = {"cli": "pi", "argv": ["pi"], "env": PI_ENV, "setup": pi_seed}
P_WORK = r"Working\.\.\."


def p_answer_end(n, idle=6):
    return [("wait_ev", "first_content", n, 90, L("working", "responding")),
            ("wait_ev", "stream_end", n, 120, L("working", "finishing")),
            ("wait_gone", P_WORK, 20, L("ready", "prompt")), ("sleep", idle)]


SPECS["pi_bash_interrupt_error"] = dict(PI,
    description="bash tool (runs without asking) -> loop runs -> answer; a typed prompt held 6s, cleared; a 25 s silent "
                "think interrupted with Esc -> prompt; HTTP 400 -> error shown -> prompt; ctrl-d",
    turns=[tool_turn("bash", {"command": "for i in 1 2 3 4; do echo step $i; sleep 1; done"}, text="Running it."),
           text_turn("The loop ran four steps.", pre=1.5),
           text_turn(LOREM, pre=0.5, head=25, cd=0.1),
           {"kind": "error", "status": 400, "error_message": "mock: invalid request parameter",
            "error_type": "invalid_request_error", "pre_delay": 1}],
    steps=[("wait", r"escape interrupt", 60), ("wait", r"(?m)^─{40,}\n\s*\n─{40,}", 30, L("ready", "prompt")), ("sleep", 3)] +
          c_prompt("run the loop") +
          [("wait_ev", "first_content", 1, 60, L("working", "responding")),
           ("wait", r"(?m)^\s*step 1\s*$", 30, L("working", "tool_running")),
           ("wait_ev", "req", 2, 60, L("working", "thinking"))] + p_answer_end(2, idle=4) +
          [("type", "this prompt is typed but never submitted", 0.08, L("ready", "prompt_typed")), ("sleep", 6),
           ("send", "\x03", L("ready", "prompt")), ("sleep", 3)] +
          c_prompt("think about this for a while") +
          [("wait_ev", "req", 3, 90), ("sleep", 6), ("send", "\x1b", L("transition", "interrupting")),
           ("wait_gone", P_WORK, 20, L("ready", "prompt_interrupted")), ("sleep", 5)] +
          c_prompt("second question") +
          [("wait", r"invalid request parameter", 90, L("ready", "prompt_after_error")), ("sleep", 8),
           ("send", "\x04", L("transition", "exiting")), ("wait_exit", 20)])


def pi_seed_progress(ctx):
    pi_seed(ctx)
    p = os.path.join(ctx["home"], ".pi", "agent", "settings.json")
    s = json.load(open(p))
    s["terminal"] = {"showTerminalProgress": True}
    json.dump(s, open(p, "w"))


SPECS["pi_progress_long_think"] = dict(PI, setup=pi_seed_progress,
    description="terminal.showTerminalProgress on (OSC 9;4;3 while a turn runs, 9;4;0 after): a 15 s silent think, "
                "then a slow answer; a second turn streamed at once; ctrl-d",
    turns=[text_turn("Short answer after a long silent wait.", pre=15, cd=0.1),
           text_turn(LOREM, pre=0.3, cd=0.1)],
    steps=[("wait", r"escape interrupt", 60), ("wait", r"(?m)^─{40,}\n\s*\n─{40,}", 30, L("ready", "prompt")), ("sleep", 3)] +
          c_prompt("think hard about the design") + p_answer_end(1, idle=5) +
          c_prompt("and now explain it") + p_answer_end(2, idle=6) +
          [("send", "\x04", L("transition", "exiting")), ("wait_exit", 20)])

# ------------------------------------------------------- Claude Code 2.1.330: diff, external editor
# Seed 004's `diff` and `external_editor`. /diff opens "Uncommitted changes (git diff HEAD)" above the prompt
# (Enter views a file's diff, Esc goes back, Esc closes); Ctrl-G opens $EDITOR on the prompt in
# /tmp/claude-<uid>/claude-prompt-<uuid>.md, run in Claude's own process group, and Claude waits for it.
# The session feedback survey ("How is Claude doing this session? (optional)") could not be brought up offline.
from scenarios import CLAUDE_ENV, claude_seed, c_start, c_exit_slash  # noqa: E402

CC330_CACHE = AG + "/node_modules/@anthropic-ai/claude-code/bin/claude.exe"


def cc_git_seed(ctx):
    claude_seed(extra={"lastOnboardingVersion": "2.1.330"})(ctx)
    import subprocess
    subprocess.run(["git", "init", "-q", ctx["proj"]], check=True)
    subprocess.run(["git", "-C", ctx["proj"], "add", "hello.py"], check=True)
    subprocess.run(["git", "-C", ctx["proj"], "-c", "user.email=dev@box", "-c", "user.name=dev", "commit", "-qm", "init"],
                   check=True)
    open(os.path.join(ctx["proj"], "hello.py"), "w").write('print("hello, world")\n')


SPECS["claude330_diff_editor_noprobe"] = dict(
    cli="claude", argv=[CC330_CACHE, "--permission-mode", "default"], setup=cc_git_seed,
    env=dict(CLAUDE_ENV, EDITOR="vi"),
    description="[2.1.330, OSC 7501 probe NOT answered] /diff -> 'Uncommitted changes' (held 5s) -> Enter: the file's "
                "diff (held 4s) -> Esc, Esc -> prompt; a prompt typed, Ctrl-G -> vi on the prompt file (held 8s) -> :wq "
                "-> prompt with the text; cleared; /exit",
    turns=[],
    steps=c_start() + [("sleep", 3), ("type", "/diff", 0.1, L("ready", "prompt_typed")), ("sleep", 1.0),
           ("send", "\r", L("transition", "submit")),
           ("wait", r"Uncommitted changes \(git diff HEAD\)", 20, L("needs_input", "diff")), ("sleep", 5),
           ("send", "\r"), ("wait", r"Esc to back", 10), ("sleep", 4),
           ("send", "\x1b"), ("wait", r"Esc to close", 10), ("sleep", 2),
           ("send", "\x1b", L("transition", "answered")),
           ("wait_gone", r"Uncommitted changes", 10, L("ready", "prompt")), ("sleep", 4),
           ("type", "draft a longer prompt", 0.08, L("ready", "prompt_typed")), ("sleep", 1.5),
           ("send", "\x07", L("transition", "submit")),
           ("wait", r"claude-prompt-[0-9a-f-]+\.md", 20, L("needs_input", "external_editor")), ("sleep", 8),
           ("send", ":wq\r", L("transition", "answered")),
           ("wait", r"❯ draft a longer prompt", 10, L("ready", "prompt_typed")), ("sleep", 4),
           ("send", "\x15", L("ready", "prompt")), ("sleep", 3)] + c_exit_slash())
