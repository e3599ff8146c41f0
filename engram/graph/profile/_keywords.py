"""Keyword and pattern tables (English and Chinese) behind the task profile.

Data only: which phrases signal each task type and which mark a task as high risk. The
logic that scores them lives in ``engram.graph.profile._task_profile``.
"""

from __future__ import annotations

import re
from typing import Literal

TypeName = Literal["debug", "refactor", "feature", "explain", "test", "docs", "ops"]

_W = r"(?<![A-Za-z0-9_])"  # left word boundary that also works next to CJK text
_E = r"(?![A-Za-z0-9_])"


def _rx(*alternatives: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{a})" for a in alternatives), re.IGNORECASE)


def _en(*words: str) -> str:
    return _W + "(?:" + "|".join(words) + ")" + _E


# (type, weight, pattern). Intent phrases ("fix", "write tests for", "explain") weigh more than
# topic nouns ("pipeline", "docs", "config"): a task names its intent once, its topic often.
TYPE_RULES: tuple[tuple[TypeName, float, re.Pattern[str]], ...] = (
    (
        "debug",
        3,
        _rx(
            _en(
                r"fix(es|ed|ing)?",
                r"bugs?",
                r"crash(es|ed|ing)?",
                r"broken",
                r"exceptions?",
                r"traceback",
                r"stack ?trace",
                r"regression",
                r"debug(ging)?",
                r"errors?",
                r"fail(s|ed|ing|ure)?",
                r"hangs?",
                r"leaks?",
                r"deadlocks?",
                r"flaky",
                r"wrong",
                r"incorrect",
                r"not working",
                r"doesn'?t work",
                r"panics?",
                r"timeouts?",
                r"500s?",
                r"NPE",
                r"null ?pointer",
                r"off-by-one",
                r"race condition",
                r"investigate",
                r"diagnose",
                r"troubleshoot",
                r"\w+(Exception|Error)",
                r"garbled",
                r"mojibake",
                r"slow",
                r"too slow",
                r"performance issue",
                r"unexpected(ly)?",
                r"missing data",
                r"stopped working",
                r"look into",
                r"(doesn'?t|does not|won'?t|can'?t|cannot|isn'?t|is not|aren'?t|"
                r"never) (\w+ )?(work|load|show|save|update|respond|start|open|"
                r"return|send|appear|compile|build|run)\w*",
                r"returns? (null|none|nil|undefined|empty|the wrong)",
                r"(connection|socket) (reset|refused|closed)",
                r"unable to",
                r"(stack |buffer |integer )?overflow",
                r"segfault",
                r"core dump",
                r"oom",
                r"out of memory",
                r"[45]\d\ds?",
                r"since (yesterday|the|we|last)",
                r"even (with|though|when)",
                r"intermittent(ly)?",
                r"off by (one|\d+|a)",
            ),
            r"修复|修正|报错|错误|崩溃|异常|故障|排查|定位|失败|卡死|泄漏|不生效|"
            r"不工作|闪退|超时|问题出在|乱码|修一下|修好|bug|不对|不正确|不一致|对不上|"
            r"少了|多了|怎么回事|很慢|变慢|没反应|无响应|没有响应|重复显示|打不开|"
            r"无法|不显示|卡住|丢失|白屏|进不去|不出来|出不来|没有更新|没更新|不更新|没有生效|没生效|没有变化|"
            r"没有保存|没保存|还是|仍然|依然",
        ),
    ),
    ("debug", 2, _rx(_en(r"raises", r"throws", r"twice", r"duplicated?"), r"调试|重复")),
    (
        "debug",
        2.5,
        _rx(
            _en(
                r"can still",
                r"should (only|not|never|be able)",
                r"shouldn'?t",
                r"expected .{1,40} but",
                r"instead of the expected",
            ),
            r"应该是|本应|却",
        ),
    ),
    (
        "refactor",
        3,
        _rx(
            _en(
                r"refactor(s|ed|ing)?",
                r"renam(e|es|ed|ing)",
                r"extract",
                r"restructur(e|ing)",
                r"reorganiz(e|ing)",
                r"clean ?up",
                r"simplif(y|ies|ying)",
                r"split",
                r"decouple",
                r"deduplicate",
                r"dedupe",
                r"consolidate",
                r"inline",
                r"modernize",
                r"move",
                r"reformat",
                r"format(ting)?",
                r"(remove|delete|drop) (the |all )?"
                r"(unused|dead|obsolete|legacy|deprecated)\w*",
                r"lint",
                r"tidy",
                r"dead code",
                r"sort imports",
                r"typos?",
            ),
            r"重构|重命名|改名|提取|拆分|整理|简化|解耦|合并重复|格式化|"
            r"清理|去重|抽取|迁移到|缩进|移到|废弃|合并|统一|拆|太大|按职责",
        ),
    ),
    (
        "refactor",
        4,
        _rx(
            _en(
                r"replace .{1,50} with",
                r"convert .{1,50} (to|into)",
                r"rewrite",
                r"port .{1,40} to",
                r"switch .{1,40} (from|to)",
                r"migrate .{1,40} to",
                r"use .{1,30} instead of",
            ),
            r"换成|替换|改成|改为|改用|拆到|拆成|拆出|改写|重写",
        ),
    ),
    (
        "refactor",
        3,
        _rx(
            _en(
                r"break .{1,50} into",
                r"into smaller",
                r"god class",
                r"turn .{1,50} into",
                r"get rid of",
                r"collapse",
                r"unify",
                r"pull .{1,50} out of",
                r"kill (the |all )?(dead|unused|old)",
                r"merge .{1,50} into one",
                r"indentation",
                r"whitespace",
                r"break (\w+ ){0,3}(apart|up)",
                r"factor (\w+ ){0,3}(out|into)",
                r"(two|four|2|4) spaces",
                r"tabs to spaces",
                r"circular (imports?|dependenc\w+)",
                r"apply (prettier|black|gofmt|isort|eslint|ruff)",
                r"run (prettier|black|gofmt|isort)",
            )
        ),
    ),
    (
        "feature",
        2,
        _rx(
            _en(
                r"add(s|ed|ing)?",
                r"implement(s|ed|ing)?",
                r"support",
                r"create",
                r"build",
                r"introduce",
                r"enable",
                r"allow",
                r"integrate",
                r"expose",
                r"make it possible",
                r"let (users?|admins?|customers?)",
            ),
            r"添加|实现|新增|支持|开发|增加|加一个|加上|接入|集成|做一个|允许|加个",
        ),
    ),
    ("feature", 1.5, _rx(_en(r"new", r"endpoint", r"feature"))),
    (
        "explain",
        3.5,
        _rx(
            _en(
                r"explain",
                r"walk me through",
                r"describe",
                r"overview",
                r"tell me about",
                r"summari[sz]e",
                r"difference between",
                r"help me understand",
                r"trace how",
                r"show me how",
                r"tell me (how|why|what|which|where)",
                r"purpose of",
                r"what'?s the (purpose|point|role|reason)",
                r"rundown",
                r"how do we",
                r"tour",
                r"eli5",
                r"walk ?through",
                r"high-level",
                r"big picture",
                r"(give|show) me .{0,30}(overview|summary|"
                r"picture|explanation)",
            ),
            r"解释|讲解|说明一下|介绍一下|梳理|看懂|原理|的作用|区别|讲一下|讲讲|说说|"
            r"介绍|是怎么|怎么设计|如何设计|怎么实现的|如何实现的",
        ),
    ),
    (
        "explain",
        3,
        _rx(
            _en(
                r"what (does|is|are|do)",
                r"how (does|do|is|are)",
                r"why (does|is|do|are)",
                r"understand",
                r"where is",
                r"which .{1,30} (calls|uses)",
                r"what happens when",
            ),
            r"是什么|什么意思|怎么工作|如何工作|为什么|理解|在哪里|流程是",
        ),
    ),
    (
        "test",
        4,
        _rx(
            _en(
                r"(unit|integration|e2e|regression|property[- ]based|property|snapshot)"
                r" tests?",
                r"(write|add|more|missing|new) (a |an |some )?(failing |unit )?tests?",
                r"test (coverage|cases?|suite) for",
                r"coverage",
                r"tests? for",
                r"tests for .{1,40} (are|is) missing",
                r"pytest",
                r"junit",
                r"jest",
                r"mock(s|ing)?",
                r"fixtures?",
                r"edge cases",
                r"cover .{1,50} with tests",
                r"regression test",
                r"(no|zero|missing|without|lacks?) (unit )?tests?.{0,40}(write|add)",
            ),
            r"单元测试|集成测试|测试用例|补充测试|写测试|加测试|添加测试|覆盖率|补测试|"
            r"编写测试",
        ),
    ),
    ("test", 3, _rx(r"测试(?!环境|服务器|通过|失败)|用例|单测")),
    (
        "docs",
        4,
        _rx(
            _en(
                r"documentation",
                r"document(s|ing)?",
                r"readme",
                r"docstrings?",
                r"comments?",
                r"changelog",
                r"javadoc",
                r"jsdoc",
                r"api reference",
                r"usage guide",
                r"tutorial",
                r"annotate",
                r"copyright",
                r"license headers?",
                r"file headers?",
                r"contributing guide",
            ),
            r"说明文档|使用说明|更新日志|README",
        ),
    ),
    ("docs", 4.5, _rx(r"文档|注释")),
    ("docs", 3, _rx(_en(r"docs?", r"wiki", r"(user )?guide"))),
    (
        "docs",
        4.5,
        _rx(
            _en(
                r"(fix|correct) (the |some |a few )?(typos?|spelling|grammar|wording|"
                r"broken links)"
            )
        ),
    ),
    (
        "ops",
        4,
        _rx(
            _en(
                r"deploy(s|ed|ing|ment)?",
                r"release",
                r"roll ?back",
                r"rollout",
                r"scale (up|out|down)",
                r"provision",
                r"restart",
                r"set up .{0,40}(monitoring|alerting|ci|pipeline|cron)",
                r"upgrade .{1,30} (version|cluster|server)",
                r"bump .{1,30} version",
                r"makefile",
                r"build (script|target)",
                r"(delete|purge|wipe|truncate|archive|backfill|clean up) "
                r".{0,80}(from|in) the (database|db)",
                r"(delete|purge|wipe|archive|backfill) .{0,40}(records|rows|accounts|"
                r"entries|users)",
                r"promote .{1,40} to (production|prod|staging)",
                r"log rotation",
                r"ci (job|pipeline|config|workflow)",
                r"gitlab ci",
                r"rotate (the )?(keys?|certs?|certificates?|secrets?|credentials?|tls)",
                r"vacuum",
                r"github actions",
                r"jenkins",
                r"publish(es)? .{0,30}(wheel|package|"
                r"image|artifact)s?",
            ),
            r"部署|上线|发布|回滚|运维|扩容|缩容|重启|灰度|清空|清库|数据清理|"
            r"删除.{0,20}(账号|账户|用户|数据|记录)|"
            r"(清理|清除|删除|清空|归档)[^，。,.]{0,15}(库|表|数据|记录)",
        ),
    ),
    (
        "ops",
        2,
        _rx(
            _en(
                r"ci",
                r"cd",
                r"pipelines?",
                r"docker(file)?",
                r"docker compose",
                r"kubernetes",
                r"k8s",
                r"helm",
                r"terraform",
                r"infra(structure)?",
                r"monitoring",
                r"alerts?",
                r"cron",
                r"nginx",
                r"backups?",
                r"github actions",
                r"workflow file",
                r"certificates?",
                r"ssl",
                r"dns",
                r"sentry",
                r"connection pool",
                r"env(ironment)? var(iable)?s?",
                r"config(uration)?",
                r"configure",
                r"hosts",
                r"servers?",
                r"reverse proxy",
                r"tls",
                r"load balancers?",
                r"instances?",
            ),
            r"流水线|监控|告警|容器|镜像|备份|证书|配置|连接池|环境变量|反向代理|服务器|日志收集|"
            r"ELK",
        ),
    ),
)
LEADING_BONUS = 1.0
"""Added to the type whose phrase opens the task (after "please", "can you", "请" …)."""
POLITE_PREFIX = re.compile(
    r"\s*(?:(?:please|pls|can you|could you|would you|help me|i need "
    r"you to|let'?s|we need to|i want to)\s+|请|帮我|帮忙|麻烦|需要)*",
    re.IGNORECASE,
)
SYMPTOM = re.compile(
    r"(?<![A-Za-z])(?:when|after|whenever|every time|sometimes|always|"
    r"getting|gets|accepts|shows|keeps)(?![A-Za-z])|的时候|之后|每次|总是|会",
    re.IGNORECASE,
)
QUESTION_WEIGHT = 3.0
"""A task ending in a question mark leans to explain (unless it reports a failure)."""
EXTRA_HIT_WEIGHT = 0.5
"""Each further distinct hit for a type adds this to its best weight."""

# High-risk triggers, each with the reason shown to the user.
PRODUCTION = _rx(
    _en(
        r"production",
        r"prod",
        r"live (site|environment|traffic|system|db|database|"
        r"users?|customers?|data|servers?|cluster)",
        r"go(es|ing|ne)? live",
        r"customer-facing",
        r"customers?'? data",
        r"real users",
        r"prd",
    ),
    r"生产|线上|正式环境|现网|上线|正式服|生产库",
)
AUTH = _rx(
    _en(
        r"auth",
        r"authn",
        r"authz",
        r"authentication",
        r"authori[sz]ation",
        r"authenticat\w*",
        r"login",
        r"log ?in",
        r"logout",
        r"sign ?in",
        r"sign ?up",
        r"passwords?",
        r"permissions?",
        r"roles?",
        r"rbac",
        r"acl",
        r"oauth\d?",
        r"jwt",
        r"sso",
        r"saml",
        r"access control",
        r"access tokens?",
        r"refresh tokens?",
        r"session tokens?",
        r"api keys?",
        r"credentials?",
        r"privileges?",
        r"admin rights",
        r"ownership",
        r"owners?",
        r"(non-)?admins?",
        r"superusers?",
        r"read-only (user|account)",
        r"401",
        r"403",
        r"unauthori[sz]ed",
        r"forbidden",
        r"2fa",
        r"mfa",
        r"two-factor",
        r"otp",
        r"totp",
        r"log(s|ged|ging)? ?(in|out)",
        r"sign(s|ed|ing)? ?(in|out|up)",
        r"sessions?",
        r"(auth|access|refresh|bearer|session|api|csrf|id|jwt|oauth) ?tokens?",
        r"tokens? (refresh|expir\w*|validation|revocation|rotation)",
        r"csrf",
        r"cookies?",
    ),
    r"认证|鉴权|授权|权限|角色|登录|登陆|密码|令牌|凭证|单点登录|账号|帐号|管理员|会话|"
    r"token ?刷新|刷新 ?token|token ?过期|踢下线|注册|验证码",
)
SCHEMA = _rx(
    _en(
        r"schemas?",
        r"migrations?",
        r"alter table",
        r"ddl",
        r"drop (table|column|index)",
        r"add (a )?column",
        r"rename (a |the )?column",
        r"foreign keys?",
        r"migrat(e|ing) (the )?(database|db|data|tables?|schema|records)",
        r"(add|drop|remove|rename|alter|change)\w* (\S+ ){0,4}(columns?|indexe?s?)",
        r"(drop|truncate)\w* (the )?(\S+ ){0,2}(tables?|collections?|databases?)",
    ),
    r"表结构|数据迁移|迁移数据|数据库迁移|迁移脚本|字段类型|建表|删表|索引|"
    r"(加|增加|新增|添加|删除|删|去掉|修改|改)[^，。,.]{0,20}(字段|列)",
)
_DATA_NOUNS = (
    r"(data|records?|rows?|tables?|users?|accounts?|customers?|entries|orders?|"
    r"projects?|posts?|comments?|messages?|documents?|buckets?|backups?|databases?|"
    r"db|collections?|sessions?|history|everything)"
)
# A deletion verb counts only with something that holds data as its object ("delete their
# account", "drop the sessions table"), not when it names a behaviour ("links drop the
# filters", "truncate long lines").
DELETION = _rx(
    _en(
        r"(delet(e|es|ed|ing)|purg(e|es|ed|ing)|wip(e|es|ed|ing)|truncat(e|es|ed|ing)|"
        r"drop(s|ped|ping)?|remov(e|es|ed|ing)|eras(e|es|ed|ing)) (\S+ ){0,4}" + _DATA_NOUNS,
        r"(soft|hard)[- ]delet(e|es|ed|ing|ion)",
        r"(data|records?|rows?|users?|accounts?|customers?) (deletion|removal|purge)",
        r"(deletion|removal|purge) of (\S+ ){0,3}" + _DATA_NOUNS,
    ),
    r"删除|删掉|清空|清除数据|清库|销毁",
)
# Deleting code (a comment, an import) is not data deletion.
CODE_DELETION = _rx(
    _en(
        r"(delete|remove|drop) (the |an |a |all |any )?(unused |dead |old |"
        r"obsolete |duplicate |commented[- ]out )?(comments?|imports?|code|"
        r"functions?|methods?|variables?|helpers?|lines?|print statements?|"
        r"logs? statements?|debug output|whitespace|blank lines|todos?|"
        r"parameters?|arguments?|branch(es)?|dependenc(y|ies))"
    ),
    r"删除(无用|多余|未使用|废弃|注释掉的)?(代码|注释|导入|import|函数|方法|变量|空行|"
    r"日志|打印)",
)
MANY_FILES_WORDS = _rx(
    _en(
        r"(all|every|each) (the )?(files?|modules?|services?|packages?|"
        r"call ?sites?|callers|usages?|endpoints?|controllers?|repos?)",
        r"whole (codebase|code base|project|repo(sitory)?)",
        r"entire (codebase|code base|project|repo(sitory)?)",
        r"across the (codebase|code base|project|repo(sitory)?|services?)",
        r"codebase-wide",
        r"project-wide",
        r"repo-wide",
        r"monorepo",
        r"everywhere",
        r"(every|all) (occurrences?|references?|usages?|"
        r"call ?sites?|callers)",
        r"in the (whole |entire )?codebase",
        r"in the (whole|entire) repo",
        r"across (all|every|the whole|the "
        r"entire)",
        r"(all|every) (of )?(our|the) (\w+ )?(services|modules|"
        r"packages|repos|files|apps|microservices)",
        r"(in|across) (all|every) (the |our )?\w+",
        r"(all|every) (the |of the )?(\w+ ){0,2}(statements|calls|imports|"
        r"usages|occurrences|instances)",
        r"throughout the (code|codebase|project|repo)",
    ),
    r"所有文件|全部文件|所有模块|整个项目|整个代码库|全项目|全局替换|所有调用|"
    r"每个文件|所有服务|全仓库|所有引用|所有调用的地方|全部引用|整个代码|全局|"
    r"(所有|全部|整个|每个|各个)[^，。,.]{0,10}(文件|模块|服务|项目|代码|接口|"
    r"调用|引用|地方|仓库|语句|用法)",
)
FILE_COUNT = _rx(
    _W + r"(\d+)\s*(?:source |code |python |java )?(?:files?|modules?|classes|"
    r"services?|packages?)" + _E,
    r"(?<!\d)(\d+)\s*个(?:文件|模块|类|服务|包)",  # from a number's start: linear in digits
)
PATH = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.(?:py|java|js|jsx|ts|tsx|go|rs|rb|kt|"
    r"scala|c|cc|cpp|h|hpp|cs|php|swift|sql|json|ya?ml|toml|ini|cfg|md|rst|txt|"
    r"sh|proto|gradle|xml|html|css|vue)|(?:[\w.-]+/){2,}[\w.-]*)(?![\w/])"
)
"""A file path with a known extension, or a deeper path (``a/b/c``); "async/await" is not."""
NO_TESTS = _rx(
    _en(
        r"no (existing |unit )?tests?",
        r"without (any )?tests?",
        r"untested",
        r"no test coverage",
        r"lacks? tests?",
        r"zero coverage",
    ),
    r"没有(任何)?测试|无测试|没有单元测试|缺少测试|没写测试",
)
HAS_TESTS = _rx(
    _en(
        r"(existing|current) (unit )?tests?",
        r"test suite",
        r"tests? (pass|fail)",
        r"failing tests?",
        r"keep (the )?tests? green",
        r"ci is red",
        r"pytest",
        r"(unit|integration) tests?",
    ),
    _W + r"tests?/",
    r"现有测试|测试用例|测试套件|单元测试|测试通过|测试失败",
)
# Low-risk work: formatting, comments, renames, explanations.
COSMETIC = _rx(
    _en(
        r"renam(e|es|ed|ing)",
        r"reformat",
        r"format(ting)?",
        r"typos?",
        r"spelling",
        r"comments?",
        r"docstrings?",
        r"whitespace",
        r"indentation",
        r"sort imports",
        r"lint( warnings?)?",
        r"unused imports?",
        r"naming",
        r"readme",
        r"changelog",
        r"prettier",
        r"black",
        r"gofmt",
        r"isort",
    ),
    r"重命名|改名|格式化|注释|拼写|错别字|缩进|命名|空格|文档|名字|变量名|函数名",
)
READ_ONLY_TYPES: frozenset[str] = frozenset({"explain"})
WRITE_FREE_TYPES: frozenset[str] = frozenset({"explain", "docs"})

TERM_WORD = re.compile(r"[a-z][a-z0-9_]{3,}|[\u4e00-\u9fff]+")
"""Salient terms: Latin words of four or more characters, and runs of CJK characters."""
STOPWORDS: frozenset[str] = frozenset(
    "this that with from into when then than them they their there these those what which "
    "while where have been will would should could does make made also only some more most "
    "each every other after before about over under again just like need needs want task "
    "please file files code work works working change changes update using used".split()
)
