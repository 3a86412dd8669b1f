"""Qwen Code 0.24.4 recordings (issue 25), against the mock's OpenAI chat
completions API with function calls. Imported by scenarios.py."""
import os

from scenarios import SPECS, L, c_prompt, text_turn, tool_turn, LOREM

QWEN_ENV = {"OPENAI_API_KEY": "mock-key", "OPENAI_BASE_URL": "http://127.0.0.1:{port}/v1",
            "OPENAI_MODEL": "qwen3-coder-plus",
            "PATH": os.path.expanduser("~/.cache/hm-agents/qwen/node_modules/.bin") + ":/usr/local/bin:/usr/bin:/bin"}
Q_READY = r"Type your message or @path/to/file"
Q_WORK = r"esc to cancel\)"
QW = {"cli": "qwen", "argv": ["qwen", "--approval-mode", "default"], "env": QWEN_ENV}


def q_seed(ctx):
    open(os.path.join(ctx["proj"], "hello.py"), "w").write('print("hello")\n')


def q_start():
    # The composer is drawn before the CLI takes keys: wait for its start-up.
    return [("wait", Q_READY, 60), ("wait_gone", r"Initializing", 60, L("ready", "prompt")), ("sleep", 3)]


def q_answer_end(n, idle=6):
    return [("wait_ev", "first_content", n, 90, L("working", "responding")),
            ("wait_ev", "stream_end", n, 120, L("ready", "prompt")),
            ("wait_gone", Q_WORK, 20), ("sleep", idle)]


def q_exit():
    return [("type", "/quit", 0.1, L("ready", "prompt_typed")), ("sleep", 0.8),
            ("send", "\r", L("transition", "exiting")), ("wait_exit", 20)]


SPECS["qwen_shell_permission"] = dict(QW, setup=q_seed,
    description="shell tool -> 'Allow execution of' (held 8s) -> Enter (allow once) -> loop runs -> answer; "
                "again -> dialog (held 8s) -> Esc (deny) -> prompt; /quit",
    turns=[tool_turn("run_shell_command", {"command": "for i in 1 2 3 4; do echo step $i; sleep 1; done",
                                           "description": "Run the loop"}),
           text_turn("The loop ran four steps.", pre=1.5),
           # Qwen Code asks once more after an answer (a request with 6 tools).
           text_turn("OK.", pre=0, cd=0.01),
           tool_turn("run_shell_command", {"command": "rm -rf build && make all", "description": "Clean and rebuild"})],
    steps=q_start() + c_prompt("run the loop") +
          [("wait", r"Allow execution of", 60, L("needs_input", "permission")), ("sleep", 8),
           ("send", "\r", L("working", "tool_running")),
           ("wait_ev", "req", 2, 60, L("working", "thinking"))] + q_answer_end(2, idle=5) +
          c_prompt("now rebuild from scratch") +
          [("wait", r"Allow execution of", 60, L("needs_input", "permission")), ("sleep", 8),
           ("send", "\x1b", L("ready", "prompt")), ("sleep", 6)] + q_exit())

SPECS["qwen_interrupt_error"] = dict(QW, setup=q_seed,
    description="a 20 s silent think interrupted with Esc -> prompt; then HTTP 400 -> error shown -> prompt; /quit",
    turns=[text_turn(LOREM, pre=0.5, head=20, cd=0.1),
           {"kind": "error", "status": 400, "error_message": "mock: invalid argument", "pre_delay": 1}],
    steps=q_start() + c_prompt("think about this for a while") +
          [("sleep", 6), ("send", "\x1b", L("ready", "prompt")), ("wait_gone", Q_WORK, 20), ("sleep", 5)] +
          c_prompt("second question") +
          [("wait_ev", "error_sent", 2, 60, L("ready", "prompt_after_error")), ("sleep", 8)] + q_exit())
