"""What an agent run is: messages, tools, budgets, the loop, the trace, approval and redaction.

Standard library and pydantic only: importing this package must not import an HTTP client or a provider SDK.
"""

from .approval import ApprovalRequired, Decision, EndRun, Proposal, decision_message, diff_sha256
from .budgets import DEFAULT_MAX_STEPS, Budgets, BudgetTracker
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
from .loop import Agent, RunResult, dump_messages, load_messages
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
from .redact import REDACTED, redact, redact_text
from .tools import Tool, ToolContext, ToolOutcome, ToolRegistry, tool
from .trace import (
    RunTrace,
    Step,
    TraceListener,
    TraceRecorder,
    list_traces,
    load_trace,
    new_run_id,
    runs_dir,
    trace_path,
    use_runs_dir,
)

__all__ = [
    "DEFAULT_MAX_STEPS",
    "REDACTED",
    "Agent",
    "ApprovalError",
    "ApprovalRequired",
    "AssistantMessage",
    "BudgetTracker",
    "Budgets",
    "ConfigError",
    "DeadlineExceeded",
    "Decision",
    "EndRun",
    "GitHubAPIError",
    "InputError",
    "Message",
    "Model",
    "ModelResponse",
    "Proposal",
    "ProviderError",
    "RepoPilotError",
    "RunError",
    "RunResult",
    "RunTrace",
    "SandboxError",
    "Step",
    "SystemMessage",
    "TextCallback",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolOutcome",
    "ToolRegistry",
    "ToolResultMessage",
    "ToolSpec",
    "TraceListener",
    "TraceRecorder",
    "Usage",
    "UsageError",
    "UserError",
    "UserMessage",
    "decision_message",
    "diff_sha256",
    "dump_messages",
    "list_traces",
    "load_messages",
    "load_trace",
    "new_run_id",
    "redact",
    "redact_text",
    "runs_dir",
    "tool",
    "trace_path",
    "use_runs_dir",
]
