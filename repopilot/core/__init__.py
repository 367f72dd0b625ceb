"""What an agent run is: messages, tools, budgets, the loop, the trace, approval and redaction.

Standard library and pydantic only: importing this package must not import an HTTP client or a provider SDK.
"""

from typing import TYPE_CHECKING

from .lazy import lazy_exports

# `redact` is both a submodule and a function: importing the submodule (as trace.py does) would bind the package
# attribute to the module, so the function is bound here, at once (the module is the standard library only).
from .redact import (
    REDACTED,
    Redactor,
    active_redactor,
    install_redactor,
    redact,
    redact_record,
    redact_text,
    using_redactor,
)

if TYPE_CHECKING:
    from .approval import ApprovalRequired, EndRun, Proposal, diff_sha256
    from .atomic import new_temp_file
    from .budgets import DEFAULT_MAX_STEPS, MAX_TOOL_CALLS_PER_TURN, Budgets
    from .errors import (
        ApprovalError,
        ConfigError,
        DeadlineExceeded,
        GitHubAPIError,
        InputError,
        ProviderError,
        RepoPilotError,
        RunError,
        SandboxError,
        UsageError,
        UserError,
    )
    from .loop import Agent, RunResult, load_messages
    from .messages import (
        AssistantMessage,
        Message,
        ModelResponse,
        SystemMessage,
        ToolCall,
        ToolResultMessage,
        ToolSpec,
        Usage,
        UserMessage,
    )
    from .model import Model, TextCallback
    from .quota import quota_gate, use_quota_gate
    from .receipt import CommandRun, FailingCommand, GuardHit, GuardResult, Receipt, SetupRun
    from .record import Record
    from .retry import RETRYABLE_STATUS, RetriesExhausted, Retry, RetryPolicy, parse_retry_after, retry_call
    from .tools import Tool, ToolContext, ToolRegistry, tool
    from .trace import (
        RunTrace,
        Step,
        TraceListener,
        TraceRecorder,
        list_traces,
        load_trace,
        read_trace,
        restore_trace,
        run_lock,
        runs_dir,
        trace_path,
        use_runs_dir,
    )
    from .waits import listen_for_waits, waiting

# Each name is imported from its module the first time it is used.
__getattr__ = lazy_exports(__name__, {
    "approval": ("ApprovalRequired", "EndRun", "Proposal", "diff_sha256"),
    "atomic": ("new_temp_file",),
    "budgets": ("DEFAULT_MAX_STEPS", "MAX_TOOL_CALLS_PER_TURN", "Budgets"),
    "errors": (
        "ApprovalError", "ConfigError", "DeadlineExceeded", "GitHubAPIError", "InputError", "ProviderError",
        "RepoPilotError", "RunError", "SandboxError", "UsageError", "UserError"
    ),
    "loop": ("Agent", "RunResult", "load_messages"),
    "messages": (
        "AssistantMessage", "Message", "ModelResponse", "SystemMessage", "ToolCall", "ToolResultMessage", "ToolSpec",
        "Usage", "UserMessage"
    ),
    "model": ("Model", "TextCallback"),
    "quota": ("quota_gate", "use_quota_gate"),
    "record": ("Record",),
    "receipt": ("CommandRun", "FailingCommand", "GuardHit", "GuardResult", "Receipt", "SetupRun"),
    "retry": ("RETRYABLE_STATUS", "RetriesExhausted", "Retry", "RetryPolicy", "parse_retry_after", "retry_call"),
    "tools": ("Tool", "ToolContext", "ToolRegistry", "tool"),
    "trace": (
        "RunTrace", "Step", "TraceListener", "TraceRecorder", "list_traces", "load_trace", "read_trace",
        "restore_trace", "run_lock", "runs_dir", "trace_path", "use_runs_dir"
    ),
    "waits": ("listen_for_waits", "waiting"),
})

__all__ = [
    "DEFAULT_MAX_STEPS",
    "MAX_TOOL_CALLS_PER_TURN",
    "REDACTED",
    "RETRYABLE_STATUS",
    "Agent",
    "ApprovalError",
    "ApprovalRequired",
    "AssistantMessage",
    "Budgets",
    "CommandRun",
    "ConfigError",
    "DeadlineExceeded",
    "EndRun",
    "FailingCommand",
    "GitHubAPIError",
    "GuardHit",
    "GuardResult",
    "InputError",
    "Message",
    "Model",
    "ModelResponse",
    "Proposal",
    "ProviderError",
    "Receipt",
    "Record",
    "Redactor",
    "RepoPilotError",
    "RetriesExhausted",
    "Retry",
    "RetryPolicy",
    "RunError",
    "RunResult",
    "RunTrace",
    "SandboxError",
    "SetupRun",
    "Step",
    "SystemMessage",
    "TextCallback",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolRegistry",
    "ToolResultMessage",
    "ToolSpec",
    "TraceListener",
    "TraceRecorder",
    "Usage",
    "UsageError",
    "UserError",
    "UserMessage",
    "active_redactor",
    "diff_sha256",
    "install_redactor",
    "list_traces",
    "listen_for_waits",
    "load_messages",
    "load_trace",
    "new_temp_file",
    "parse_retry_after",
    "quota_gate",
    "read_trace",
    "redact",
    "redact_record",
    "redact_text",
    "restore_trace",
    "retry_call",
    "run_lock",
    "runs_dir",
    "tool",
    "trace_path",
    "use_quota_gate",
    "use_runs_dir",
    "using_redactor",
    "waiting",
]
