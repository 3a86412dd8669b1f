"""Claude Code 2.1.330 in its default (auto) permission mode, offline: the
claude330_automode_* recordings (record.py specs, imported like qwen_specs.py)."""
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenarios
from scenarios import SPECS, CL, CLAUDE_ENV, claude_seed, hooks_settings, tool_turn, text_turn, L, c_prompt, c_answer_end, c_exit_ctrlc, c_exit_slash, OSC7501_REPLY

# The Claude Code 2.1.330 executable (npm @anthropic-ai/claude-code@2.1.330).
CC = os.environ.get("CLAUDE_EXE", "claude")
READY = r"auto mode on \(shift\+tab to cycle\)"
NOTICE = r"Enter to stay in auto mode"
PERM = r"Do you want to proceed\?"


def seed_and_hooks(probe):
    seed = claude_seed(trust=True, extra={"lastOnboardingVersion": "2.1.330"})
    def setup(ctx):
        seed(ctx)
        if probe:
            hooks_settings(ctx)
    return setup


def spec(name, probe, deny, cols=120, rows=40):
    argv = [CC] + (["--settings", "{rundir}/hooks-settings.json"] if probe else [])   # NO --permission-mode: auto
    turns = [tool_turn("Bash", {"command": "for i in 1 2 3 4 5; do echo step $i >> steps.txt; sleep 1.5; done",
                                "description": "Write five steps to steps.txt"}, text="I'll run the loop for you."),
             text_turn("The loop wrote five steps to steps.txt.", pre=2, cd=0.15)]
    steps = [("wait", READY, 30, L("ready", "prompt"))] + c_prompt("run the five step loop") + [
        ("wait_ev", "stream_end", 1, 60, L("working", "tool_pending")),
        ("wait", NOTICE, 30, L("needs_input", "auto_mode_notice")), ("sleep", 6),
        ("send", "\r", L("transition", "answered")),          # Enter: stay in auto mode
        ("wait", PERM, 30, L("needs_input", "permission")), ("sleep", 6)]
    if not deny:
        steps += [("send", "\x1b[B"), ("wait", r"❯ Yes", 5), ("sleep", 2),   # Down: "❯ Yes" (still needs_input)
                  ("send", "\r", L("working", "tool_running")),
                  ("wait_ev", "req", 2, 60, L("working", "thinking"))] + c_answer_end(2, idle=6) + c_exit_ctrlc()
    else:
        steps += [("send", "\x1b", L("ready", "prompt")), ("wait", r"Interrupted", 5), ("sleep", 6)] + c_exit_ctrlc()
    s = dict(CL, argv=argv, setup=seed_and_hooks(probe), cli="claude", cols=cols, rows=rows,
             env=dict(CLAUDE_ENV, PATH=os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin")),
             description=("[2.1.330 default=auto permission mode, mock API: 'Auto mode can't check actions' notice, "
                          "Enter=stay, then 'Do you want to proceed? ❯ No / Yes' -> " +
                          ("Esc (deny)" if deny else "Down, Enter (approve) -> command runs -> answer") + "] " +
                          ("OSC 7501 probe answered, hooks logged" if probe else "probe NOT answered (as behind tmux)")),
             turns=turns, steps=steps)
    if probe:
        s["answer_7501"] = OSC7501_REPLY
    return s


SPECS["claude330_automode_approve"] = spec("claude330_automode_approve", True, False)
SPECS["claude330_automode_deny"] = spec("claude330_automode_deny", True, True)
SPECS["claude330_automode_approve_noprobe"] = spec("x", False, False)
SPECS["claude330_automode_approve_80x24_noprobe"] = spec("x", False, False, 80, 24)

if __name__ == "__main__":
    import record
    out = sys.argv[1]
    for n in sys.argv[2:]:
        sp = SPECS[n]; sp["name"] = n
        print("== recording", n, file=sys.stderr)
        # Usage: python3 automode_specs.py OUT_DIR NAME... (beside the shared
        # corpus's record.py and scenarios.py; CLAUDE_EXE names the CLI).
        record.Rec(sp, out, os.path.join(out, "run", n)).run()
