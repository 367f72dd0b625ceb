"""A seeded set of fake but format-valid credentials, each in the kind of line people leak it in.

Each sample is (name, line, secret): `secret` is the part that must never appear in any output. Generated from a
fixed seed, so every run tests the same strings; none is a real credential. Shared by the recall test and
bench/redaction_recall.py.
"""

from __future__ import annotations

import base64
import random
import string

__all__ = ["ENV_SECRET", "samples"]

# A secret known from the environment (as a key variable would be): its base64 must be caught too.
ENV_SECRET = "env-held-secret-Vq7Lm2Xw9Rt4"

_ALNUM = string.ascii_letters + string.digits


def samples(seed: int = 20261202) -> list[tuple[str, str, str]]:
    rnd = random.Random(seed)

    def pick(alphabet: str, n: int) -> str:
        # Mixed classes, so each value has the entropy of a real token (rules reject "aaaa…").
        return "".join(rnd.choice(alphabet) for _ in range(n))

    hexd = "0123456789abcdef"
    word = _ALNUM + "_-"
    jwt = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJ" + pick(_ALNUM, 40) + "." + pick(_ALNUM + "_-", 43))
    pem_body = "\n".join(pick(_ALNUM + "+/", 64) for _ in range(6))
    out = [
        ("npm", "//registry.npmjs.org/:_authToken=npm_{s}", "npm_" + pick(_ALNUM, 36)),
        ("pypi", "password = {s}", "pypi-AgEIcHlwaS5vcmc" + pick(word, 70)),
        ("gitlab-pat", "git push https://gitlab.com/x.git  # token {s}", "glpat-" + pick(word, 20)),
        ("gitlab-runner", "runner registered with {s}", "glrt-" + pick(word, 20)),
        ("gitlab-deploy", "deploy token: {s}", "gldt-" + pick(word, 20)),
        ("stripe-live", "Stripe.api_key = '{s}'", "sk_live_" + pick(_ALNUM, 24)),
        ("stripe-restricted", "STRIPE_KEY={s}", "rk_test_" + pick(_ALNUM, 24)),
        ("slack-webhook", "curl -X POST {s}",
         "https://hooks.slack.com/services/T" + pick(string.ascii_uppercase + string.digits, 8) + "/B"
         + pick(string.ascii_uppercase + string.digits, 8) + "/" + pick(_ALNUM, 24)),
        ("slack-bot", "SLACK_BOT={s}", "xoxb-" + pick(string.digits, 11) + "-" + pick(string.digits, 12) + "-"
         + pick(_ALNUM, 24)),
        ("huggingface", "huggingface-cli login --token {s}", "hf_" + pick(string.ascii_letters, 34)),
        ("jwt", "Cookie: session={s}", jwt),
        ("pem-rsa", "{s}", "-----BEGIN RSA PRIVATE KEY-----\n" + pem_body + "\n-----END RSA PRIVATE KEY-----"),
        ("pem-openssh", "{s}", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + pem_body
         + "\n-----END OPENSSH PRIVATE KEY-----"),
        ("url-password", "Cloning into 'x'... https://deploy:{s}@git.example.com/x.git", pick(_ALNUM, 18)),
        ("url-password-db", "DATABASE_URL=postgres://app:{s}@db.internal:5432/app", pick(_ALNUM, 16)),
        ("aws-key-id", "aws_access_key_id = {s}", "AKIA" + pick(string.ascii_uppercase + "234567", 16)),
        ("aws-secret", "aws_secret_access_key = {s}", pick(_ALNUM + "+/", 40)),
        ("aws-secret-env", "export AWS_SECRET_ACCESS_KEY={s}", pick(_ALNUM + "+/", 40)),
        ("query-token", "GET /api/v1/items?access_token={s}&page=2", pick(_ALNUM, 32)),
        ("query-apikey", "OPENAI_BASE_URL=https://proxy.example.com/v1?api-key={s}", pick(_ALNUM, 32)),
        ("query-sig", "https://bucket.s3.amazonaws.com/x?X-Amz-Signature={s}", pick(hexd, 64)),
        ("base64-of-known", "Authorization: Basic {s}",
         base64.b64encode(f"ci-bot:{ENV_SECRET}".encode()).decode()),
        ("github-pat", "remote: token {s}", "ghp_" + pick(_ALNUM, 36)),
        ("github-fine", "GH_TOKEN={s}", "github_pat_" + pick(_ALNUM, 22) + "_" + pick(_ALNUM, 59)),
        ("github-oauth", "oauth {s}", "gho_" + pick(_ALNUM, 36)),
        ("openai", "OPENAI_API_KEY={s}", "sk-proj-" + pick(word, 48)),
        ("anthropic", "x-api-key: {s}", "sk-ant-api03-" + pick(word, 93) + "AA"),
        ("google", "key={s}", "AIza" + pick(word, 35)),
        ("sendgrid", "SENDGRID_API_KEY={s}", "SG." + pick(word, 22) + "." + pick(word, 43)),
        ("twilio", "twilio sid {s}", "SK" + pick(hexd, 32)),
        ("digitalocean", "doctl auth init -t {s}", "dop_v1_" + pick(hexd, 64)),
        ("shopify", "X-Shopify-Access-Token: {s}", "shpat_" + pick(hexd, 32)),
        ("databricks", "DATABRICKS_TOKEN={s}", "dapi" + pick(hexd, 32)),
        ("pulumi", "PULUMI_ACCESS_TOKEN={s}", "pul-" + pick(hexd, 40)),
        ("grafana", "grafana {s}", "glc_" + pick(_ALNUM, 40)),
        ("linear", "LINEAR={s}", "lin_api_" + pick(_ALNUM, 40)),
        ("postman", "postman {s}", "PMAK-" + pick(hexd, 24) + "-" + pick(hexd, 34)),
        ("sentry", "SENTRY_AUTH_TOKEN={s}", "sntryu_" + pick(hexd, 64)),
        ("rubygems", "GEM_HOST_API_KEY={s}", "rubygems_" + pick(hexd, 48)),
        ("age", "age key {s}", "AGE-SECRET-KEY-1" + pick("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)),
        ("vault", "VAULT_TOKEN={s}", "hvs." + pick(word, 95)),
        ("bearer", "Authorization: Bearer {s}", pick(_ALNUM + "._-", 40)),
        ("password", "db.password=\"{s}\"", pick(_ALNUM, 20)),
        ("docker-login", "echo {s} | docker login -u ci --password-stdin  # password: {s}", pick(_ALNUM, 24)),
    ]
    return [(name, line.replace("{s}", secret), secret) for name, line, secret in out]
