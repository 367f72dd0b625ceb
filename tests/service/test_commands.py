"""Comment commands on a pull request: only users with write access may give them; others are told so."""

from __future__ import annotations

from tests.service.conftest import Service

REPO = "octo/demo"


def _comment(body: str, user: str, comment_id: int = 31) -> dict[str, object]:
    return {"action": "created", "installation": {"id": 7},
            "repository": {"name": "demo", "owner": {"login": "octo"}},
            "issue": {"number": 5, "pull_request": {"url": "x"}},
            "comment": {"id": comment_id, "body": body, "user": {"login": user}}}


def test_users_without_write_access_are_refused_and_told(service: Service) -> None:
    service.github.add_repo(REPO, 7)
    service.github.permissions[(REPO, "visitor")] = "read"
    for i, body in enumerate(("/repopilot fix", "/repopilot approve " + "a" * 64)):
        assert service.deliver("issue_comment", _comment(body, "visitor", 40 + i)).status_code == 202
    service.work()
    replies = service.github.comments_on(REPO, 5)
    assert len(replies) == 2
    assert all("@visitor" in r["body"] and "write access" in r["body"] for r in replies)
    assert service.github.pulls == []
    assert service.github.made("POST", r"/pulls$") == []
    assert service.sql("SELECT count(*) FROM procrastinate_jobs WHERE status = 'succeeded'") == [(2,)]
