"""Sentence-level cues for the task profile: where the intent sits, not which topic is named.

Data only, like ``engram.graph.profile._keywords``; ``engram.graph.profile._task_profile``
applies them. These patterns describe
the shape of a request rather than its subject matter:

- a conventional prefix (``fix:``, ``feat(api):``, ``[Bug]``, ``docs:``) states the type;
- a generic creation verb (add, write, update, 写, 补, 加) takes its type from its object
  ("add tests" is test work, "add a docstring" docs, "add a CI job" ops);
- a declarative report of behaviour (negated verbs, "silently", "since the upgrade",
  "steps to reproduce", 没跑, 偶尔) is a bug report even without the word "bug";
- a word inside a modifier ("after the last release", "for the login bug", 上线后) names a
  topic, not the intent, and counts for less;
- a question that asks for an action ("can we get …?", "could you add …?") is a request.
"""

from __future__ import annotations

import re

from engram.graph.profile._keywords import TypeName

_I = re.IGNORECASE
_W = r"(?<![A-Za-z0-9_])"
_E = r"(?![A-Za-z0-9_])"

PREFIX_WEIGHT = 5.0
"""A conventional type prefix outweighs any single phrase in the text."""
PREFIXES: tuple[tuple[TypeName, re.Pattern[str]], ...] = (
    (
        "debug",
        re.compile(
            r"\s*(?:\[\s*)?(?:fix|bug|bugfix|hotfix|defect|crash|regression|"
            r"问题|缺陷|故障)(?:\([^)]*\))?\s*[\]:：]",
            _I,
        ),
    ),
    (
        "feature",
        re.compile(
            r"\s*(?:\[\s*)?(?:feat|feature|feature request|enhancement|rfe|"
            r"需求|新功能)(?:\([^)]*\))?\s*[\]:：]",
            _I,
        ),
    ),
    (
        "refactor",
        re.compile(
            r"\s*(?:\[\s*)?(?:refactor|refactoring|style|cleanup|重构)"
            r"(?:\([^)]*\))?\s*[\]:：]",
            _I,
        ),
    ),
    ("docs", re.compile(r"\s*(?:\[\s*)?(?:docs?|documentation|文档)(?:\([^)]*\))?\s*[\]:：]", _I)),
    ("test", re.compile(r"\s*(?:\[\s*)?(?:tests?|testing|测试)(?:\([^)]*\))?\s*[\]:：]", _I)),
    (
        "ops",
        re.compile(
            r"\s*(?:\[\s*)?(?:ci|cd|build|deploy|release|ops|infra|devops|运维|部署)"
            r"(?:\([^)]*\))?\s*[\]:：]",
            _I,
        ),
    ),
    ("explain", re.compile(r"\s*(?:\[\s*)?(?:question|q|how ?to|疑问|请教)\s*[\]:：]", _I)),
)

OBJECT_WEIGHT = 4.5
"""A generic verb whose object names a work product scores that product's type."""
GENERIC_VERB = re.compile(
    _W + r"(?:add(?:s|ed|ing)?|writ(?:e|es|ing)|wrote|creat(?:e|es|ed|ing)|updat(?:e|es|ed|ing)|"
    r"improv(?:e|es|ed|ing)|increas(?:e|es|ed|ing)|bump|rais(?:e|es|ing)|bring|refresh|"
    r"set(?:ting)? up|make|need|expand|extend|generat(?:e|es|ing)|provide|put|get|have|"
    r"introduc(?:e|es|ing)|implement(?:s|ed|ing)?|build|"
    r"fill in|flesh out|sets? up|want)"
    + _E
    + r"|写|补|加|添加|增加|新增|编写|更新|完善|补充|配置|搭建|做|提高|提升|生成",
    _I,
)
"""Verbs that say "produce something" and leave the kind of work to their object."""
OBJECT_WINDOW_EN = 48
OBJECT_WINDOW_ZH = 16
OBJECT_FAMILIES: tuple[tuple[TypeName, re.Pattern[str]], ...] = (
    (
        "test",
        re.compile(
            _W + r"(?:tests?|test cases?|testing|coverage|specs?|fixtures?|"
            r"assertions?|mocks?)" + _E + r"|测试|单测|用例|覆盖率",
            _I,
        ),
    ),
    (
        "docs",
        re.compile(
            _W + r"(?:docs?|documentation|readme|docstrings?|comments?|changelog|"
            r"guide|runbook|wiki|manual|faq|notes?|api reference|[\w-]+\.(?:md|rst))"
            + _E
            + r"|文档|注释|说明|手册|指南|README",
            _I,
        ),
    ),
    (
        "ops",
        re.compile(
            _W + r"(?:ci|cd|pipelines?|workflows?|dockerfile|docker images?|"
            r"containers?|helm charts?|charts?|alerts?|alerting|monitoring|dashboards?|"
            r"cron ?jobs?|health ?checks?|probes?|replicas?|terraform|manifests?)"
            + _E
            + r"|流水线|告警|监控|镜像|容器|定时任务|健康检查|副本|看板",
            _I,
        ),
    ),
)
"""The work products a generic verb can take, by the type of work they mean."""

SYMPTOM_WEIGHT = 3.0
"""A declarative description of wrong behaviour reads as a bug report."""
SYMPTOM_CUES = re.compile(
    _W + r"(?:(?:doesn'?t|don'?t|didn'?t|does not|do not|did not|won'?t|can'?t|cannot|couldn'?t|"
    r"isn'?t|aren'?t|wasn'?t|no longer|never)\s+\w+|silently|randomly|sporadic(?:ally)?|"
    r"occasionally|intermittent(?:ly)?|sometimes|every \d+\s*\w+|since (?:the|we|our|last|"
    r"\w+day|this|upgrading|updating|\d)|after (?:the )?(?:last|latest|recent|new)?\s*"
    r"(?:upgrade|update|release|deploy\w*|merge|migration|restart)|steps to reproduce|repro\w*|"
    r"expected\W|actual(?:ly)?\W|figure out|find out why|what'?s going on|what is going on|"
    r"goes wrong|went wrong|blank|stuck|freez\w+|"
    r"(?:status|http|error|exit)\s*(?:code\s*)?\d{3}|\d{3} (?:error|response|status))"
    + _E
    + r"|没有?(?:跑|执行|触发|反应|记录|收到|发出|显示|生效|更新|保存|返回)|偶尔|有时候?|时不时|"
    r"突然|一直|复现|莫名|飙|报\s*\d{3}|返回\s*\d{3}|踢|掉线|不了|不到|不上",
    _I,
)

MODIFIER_WEIGHT = 0.5
"""Weight factor for a phrase inside a modifier (it names a topic, not the intent)."""
MODIFIER_BEFORE = re.compile(
    _W + r"(?:after|since|before|during|from|for|about|of|on|in|behind|via|through|like|under|"
    r"with|without|when|while)\s+(?:[\w'-]+\s+){0,3}$",
    _I,
)
"""Words just before a hit that put it in a modifier ("after the last release")."""
SYMPTOM_NAME = re.compile(r"\w+(?:Error|Exception)|[45]\d\d")
"""An exception name or error status is evidence of a bug wherever it stands."""
MODIFIER_AFTER = re.compile(r"\s*(?:后|之后|以后|以来|时|的时候|期间|过程中|前|的)")
"""Chinese postpositions and the attributive 的 after a hit: it qualifies a noun (上线后,
部署的时候, 重复的函数)."""

DETERMINERS = re.compile(
    r"(?:(?:the|a|an|our|my|this|that|these|those|your|its)\s+|"
    r"这个|那个|这些|那些|我们的|现在的)*",
    _I,
)
"""Words a subject phrase may open with before the word that carries the topic."""
BA_CONSTRUCTION = re.compile(r"(?:把|将|给|为|對|对|替|帮)")
"""Chinese prepositions that put the object before the verb (把 X 改成 Y, 给 X 写测试)."""
REQUEST_ANYWHERE = re.compile(
    r"(?:^|[,.;!?，。；！？]\s*)(?:(?:can|could|would|will|shall)\s+(?:we|you|someone)\s+|"
    r"能不能|可以|能否|可不可以)",
    _I,
)
"""A request question after an observation ("X has grown to 40 methods, can we …?")."""
REQUEST_QUESTION = re.compile(
    r"\s*(?:(?:can|could|would|will|shall)\s+(?:we|you|i|someone)\s+(?:please\s+)?|"
    r"is it possible to\s+|any chance (?:we|you) (?:could|can)\s+|how about\s+|"
    r"能不能|可以|能否|是否可以|可不可以)",
    _I,
)
"""A question that asks for an action: the verb after it states the intent."""
QUESTION_OPENING = re.compile(
    r"\s*(?:(?:what|why|how|where|when|which|who|is|are|does|do|did|should|whats)\b|"
    r"为什么|为啥|怎么|如何|哪里|哪些|什么|是否|是不是)",
    _I,
)
"""Words that open a question asking for information."""
OBJECT_STOP = re.compile(
    _W + r"(?:to|that|which|so|because|when|for|in|on|of|from|by|before|"
    r"after|if|until|where|while|since|unless|then|pass|passing|green|"
    r"fail\w*)" + _E + r"|[,.;:!?](?=\s|$)|[，。；：！？]|"
    r"的时候|以便|用来|用于|然后|通过|失败",
    _I,
)
"""Where the object of a generic verb ends ("add tests for X", "need to fix the tests")."""
CLAUSE_END = re.compile(r"[,.;!?，。；！？\n]")
"""The end of the first clause (for finding the verb of a 把/给 construction)."""

INTENT_WEIGHT = 3.0
"""Phrases weighing this much state an intent ("fix", "write tests"); lighter ones a topic."""
TOPIC_LEAD_BONUS = 0.5
"""Main-verb bonus for a topic noun that opens the task ("Sentry is full of …")."""
DESTINATION_WEIGHT = 5.0
"""Writing into documentation ("explain X in the README") is documentation work."""
DESTINATION = re.compile(
    _W + r"(?:in|into|to) (?:the |our |a )?(?:readme|docs?|documentation|wiki|user guide|"
    r"changelog|runbook|[\w/-]+\.(?:md|rst))"
    + _E
    + r"|(?:放到|写到|写进|加到|补到|更新到|写入)[^，。,]{0,10}(?:文档|README|docs|wiki)",
    _I,
)
"""A documentation destination for what the task writes."""
QUOTED = re.compile(r"`[^`]*`|(?<![A-Za-z])'[^']*'(?![A-Za-z])|\"[^\"]*\"|“[^”]*”|「[^」]*」")
"""Quoted text: an error message or identifier the task cites, not words of the request."""
