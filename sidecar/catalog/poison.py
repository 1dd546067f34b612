"""The poisoning scan: text in a tool definition that speaks to the model instead of
describing the tool.

Pure. Reads a tool's title, description and every string of its schemas (property
names, descriptions, titles, enum values, defaults, examples, at any depth), joined into
one text so an instruction split across fields is read as one sentence. Each rule is
general (a kind of instruction, in several languages), and each finding names its rule:

  conceal           keep something from the person ("do not tell the user", "sin que el
                    usuario lo sepa", "不要告诉用户", ...)
  override          set aside earlier instructions ("ignore previous instructions", a
                    `<IMPORTANT>` or `<system>` tag, "this takes precedence over", ...)
  credential-path   a path where credentials live (~/.ssh, id_rsa, ~/.aws, .env, .netrc,
                    key files, /etc/shadow, ...)
  exfiltrate        send data to an address (a URL, an e-mail address, an IP)
  hide-in-argument  put secrets, file contents or the conversation into a parameter
  shadowing         name another upstream's tool (its own name or its `alias__tool` name)

Refuses nothing itself: the caller decides what a finding means (the pinning policy).
Cost: a rule's regexes run only on text holding one of its anchor words.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import msgspec

__all__ = ["Finding", "RULES", "RULES_VERSION", "Rule", "foreign_names", "identifiers", "scan_tool", "scan_tools",
           "shadowing", "tool_text"]

RULES_VERSION = "1"  # stored with scan results; change it whenever a rule changes, so old results are redone
_TEXT_KEYS = ("description", "title")
_VALUE_KEYS = ("enum", "default", "examples", "const")
_MAX_TEXT = 256 * 1024  # a definition's text beyond this is not read (and a tool that long is odd anyway)


class Finding(msgspec.Struct, frozen=True):
    rule: str
    field: str  # where the match starts: "description", "inputSchema.properties.note.default", ...
    excerpt: str  # the matched words, cut to 80 characters


Anchored = tuple[tuple[tuple[str, ...], ...], re.Pattern[str]]


class Rule:
    """A named kind of instruction and its patterns (each with its anchors)."""

    def __init__(self, name: str, patterns: tuple[Anchored, ...]) -> None:
        self.name = name
        self.patterns = patterns
        # the patterns that can match ASCII text: every anchor group holds an ASCII anchor
        self.ascii_patterns = tuple(p for p in patterns if all(any(a.isascii() for a in g) for g in p[0]))


_NOT_SENTENCE_END = r"(?:[^.]|\.(?=\S))"  # `[^.]` in a pattern: a dot inside `.env` or `a.b` ends nothing


def _p(anchors: str, pattern: str) -> Anchored:
    """A pattern, run only on text that holds an anchor of every group (groups split by
    `;`, alternatives by `|`: words the pattern cannot match without)."""
    groups = tuple(tuple(group.split("|")) for group in anchors.split(";"))
    return groups, re.compile(pattern.replace("[^.]", _NOT_SENTENCE_END))


_WINDOW = 320  # characters either side of an anchor a match may reach (patterns are shorter)


def _search(groups: tuple[tuple[str, ...], ...], pattern: re.Pattern[str], text: str) -> tuple[int, int] | None:
    """The pattern's first match near an occurrence of its first group's anchors, when
    every group has an anchor in the text: the regex runs on windows, not on the whole."""
    holds = text.__contains__
    for group in groups:
        if not any(map(holds, group)):
            return None
    for anchor in groups[0]:
        at = text.find(anchor)
        while at != -1:
            low, high = max(0, at - _WINDOW), at + len(anchor) + _WINDOW
            span = _window_search(pattern, text[low:high])
            if span is not None:
                return low + span[0], low + span[1]
            at = text.find(anchor, high - len(anchor))
    return None


@functools.lru_cache(maxsize=32768)  # listings repeat sentences: the same window is searched once
def _window_search(pattern: re.Pattern[str], window: str) -> tuple[int, int] | None:
    match = pattern.search(window)
    return match.span() if match is not None else None


_USER_EN = r"(?:the\s+)?(?:user|human|person|operator|customer)s?"
_SEND = r"(?:send|post|upload|forward|transmit|exfiltrate|report|submit|leak|beacon|mail|email|e-mail|deliver)"
_SECRET_EN = (r"(?:contents?|conversation|chat|history|previous\s+messages|system\s+prompt|instructions|"
              r"keys?|tokens?|credentials?|secrets?|passwords?|passphrases?|env(?:ironment)?\s+variables?|"
              r"cookies?|session|private|ssh|id_rsa|\.env|file)")
_SENSITIVE = (r"(?:contents?\s+of|conversation|chat\s+history|previous\s+messages|system\s+prompt|credentials?|"
              r"secrets?|passwords?|passphrases?|api[\s_-]?keys?|private[\s_-]?keys?|(?:access|auth|api|bearer|session|"
              r"refresh)[\s_-]?tokens?|ssh|id_rsa|\.env|env(?:ironment)?\s+var(?:iable)?s?|cookies?)")
_SENSITIVE_ANCHORS = ("contents of", "content of", "conversation", "chat history", "previous messages", "system prompt",
                      "credential", "secret", "password", "passphrase", "api key", "api_key", "apikey", "private key",
                      "private_key", "access token", "auth token", "api token", "bearer token", "session token",
                      "refresh token", "access_token", "auth_token", "api_token", "ssh", "id_rsa", ".env", "environment var", "env var", "cookie")
_PARAM = r"(?:parameter|argument|field|param|arg|property|input)"
_ADDRESS = r"(?:https?://|[\w.+-]+@[\w-]+\.[\w.]+|\d{1,3}(?:\.\d{1,3}){3})"
_TELL = "tell|mention|inform|notif|reveal|disclos|alert|warn"

RULES: tuple[Rule, ...] = (
    Rule("conceal", (
        _p(_TELL, rf"\b(?:do\s+not|don'?t|never|must\s+not|mustn'?t|should\s+not|shouldn'?t|avoid)\s+(?:\w+\s+){{0,3}}?"
           rf"(?:tell|telling|mention|mentioning|inform|informing|notify|notifying|reveal|revealing|disclose|alert|"
           rf"warn)\b[^.]{{0,40}}?\b{_USER_EN}\b"),
        _p("mention|reveal|disclos", r"\b(?:do\s+not|don'?t|never)\s+(?:mention|reveal|disclose)\s+(?:this|these|that|"
           r"it|any\s+of\s+this)\b"),
        _p("without;telling|informing|notifying|alerting|mentioning", rf"\bwithout\s+(?:\w+\s+){{0,2}}?(?:telling|informing|notifying|alerting|mentioning\s+(?:it\s+|"
           rf"this\s+)?to)\s+{_USER_EN}\b"),
        _p("without;knowing|knowledge|noticing|seeing", rf"\bwithout\s+{_USER_EN}(?:'s)?\s+(?:knowing|knowledge|noticing|seeing)\b"),
        _p("not know|n't know|never know|not see|n't see|never see|be told|find out|not notice|n't notice|not learn|n't learn|be informed|be aware", rf"\b{_USER_EN}\s+(?:must|should|need|needs|is)\s*(?:not|n't|never)\s+(?:to\s+)?"
           rf"(?:know|see|be\s+told|find\s+out|notice|learn|be\s+informed|be\s+aware)\b"),
        _p("secret|hidden|private|confidential", r"\b(?:keep|hide)\s+(?:this|these|it|that)(?:\s+\w+)?\s+(?:secret|"
           r"hidden|private|confidential)\b"),
        _p("hide", rf"\bhide\s+(?:this|it|that|them)\s+from\s+{_USER_EN}\b"),
        _p("silently|secretly|covertly|quietly", r"\b(?:silently|secretly|covertly|quietly)\s+(?:also\s+)?(?:read|"
           r"send|include|add|attach|copy|upload|forward|pass|collect|append|call|post)\b"),
        _p("usuario", r"\bno\s+(?:le\s+)?(?:digas|menciones|informes|cuentes|reveles|avises|muestres)\b[^.]{0,40}"
           r"\busuario"),
        _p("usuario", r"\bsin\s+(?:que\s+el\s+usuario\s+(?:lo\s+)?(?:sepa|note|vea)|informar|avisar|decir(?:le)?)\b"
           r"[^.]{0,20}usuario"),
        _p("usuario", r"\bel\s+usuario\s+no\s+(?:debe|deber[íi]a|tiene\s+que)\s+(?:saber|enterarse|ver)"),
        _p("utilisateur", r"\bne\s+(?:le\s+|lui\s+|l'|rien\s+)?(?:dis|dites|mentionne[zs]?|informe[zs]?|"
           r"r[ée]v[èe]le[zs]?|signale[zs]?|pr[ée]viens|pr[ée]venez)\b[^.]{0,40}\b(?:pas|rien|jamais)\b[^.]{0,40}"
           r"utilisateur"),
        _p("utilisateur", r"\bsans\s+(?:le\s+dire|pr[ée]venir|informer|avertir|en\s+informer)\b[^.]{0,10}utilisateur"),
        _p("utilisateur", r"\bl'utilisateur\s+ne\s+doit\s+(?:pas|jamais)\s+(?:savoir|voir|[êe]tre\s+inform[ée]|"
           r"le\s+savoir)"),
        _p("nutzer|anwender;nicht", r"\b(?:sag|sage|sagen\s+sie|erw[äa]hne|erw[äa]hnen\s+sie|informiere|verrate|"
           r"verraten\s+sie)\b[^.]{0,40}\b(?:benutzer|nutzer|anwender)\w*\b[^.]{0,30}\bnicht"),
        _p("nutzer|anwender", r"\b(?:dem|den)\s+(?:benutzer|nutzer|anwender)\w*\s+nicht(?:s)?\s+(?:\w+\s+)?"
           r"(?:sagen|mitteilen|erw[äa]hnen|informieren|verraten|zeigen)"),
        _p("nutzer|anwender", r"\bohne\s+(?:den|dem|die)\s+(?:benutzer|nutzer|anwender)\w*\s+(?:zu\s+)?"
           r"(?:informieren|benachrichtigen|fragen)"),
        _p("verschweig", r"\bverschweig"),
        _p("usu|utilizador", r"\bn[ãa]o\s+(?:diga|conte|mencione|informe|revele|avise)\b[^.]{0,40}\b(?:usu[áa]rio|"
           r"utilizador)"),
        _p("usu|utilizador", r"\bsem\s+(?:informar|avisar|contar\s+(?:ao|para\s+o))\s+(?:o\s+|ao\s+)?(?:usu[áa]rio|"
           r"utilizador)"),
        _p("utente", r"\bnon\s+(?:dire|dirlo|menzionare|informare|rivelare|avvisare)\b[^.]{0,40}\butente"),
        _p("utente", r"\bsenza\s+(?:informare|avvisare|dire)\b[^.]{0,10}utente"),
        _p("用户|使用者", r"(?:不要|别|勿|不得|禁止)(?:向|对)?(?:用户|使用者)(?:透露|提及|说明|告知)"),
        _p("用户|使用者", r"(?:不要|别|勿|不得|禁止)(?:告诉|告知|通知|提醒|提及|透露)(?:给)?(?:用户|使用者)"),
        _p("用户|使用者", r"(?:不要|别|勿)让(?:用户|使用者)(?:知道|看到|发现)"),
        _p("用户|使用者", r"(?:瞒着|隐瞒|背着)(?:用户|使用者)"),
        _p("用户|使用者", r"(?:用户|使用者)不(?:应|能|得|可|要)(?:该)?(?:知道|看到|发现)"),
        _p("ユーザ", r"ユーザー?(?:に|には|へ)[^。]{0,10}(?:伝え|言わ|知らせ|教え|通知し)(?:ない|ず|るな|てはいけ)"),
        _p("ユーザ", r"ユーザー?に(?:知られ|気づかれ|バレ)(?:ない|ず)"),
        _p("пользовател", r"\bне\s+(?:говори|сообщай|рассказывай|упоминай|показывай|уведомляй)\w*\b[^.]{0,30}"
           r"пользовател"),
        _p("пользовател", r"\bбез\s+(?:ведома|уведомления)\s+пользовател"),
        _p("пользовател", r"\bпользовател\w*\s+не\s+(?:должен|должна|нужно|следует)\s+(?:знать|видеть|узнать)"),
    )),
    Rule("override", (
        _p("ignore|disregard|forget|override|bypass|skip|discard;instruction|prompt|rules|directions|guidelines|messages|context|constraints|polic|guardrail;previous|prior|earlier|above|preceding|former|other|existing|original|system|initial|safety",
           r"\b(?:ignore|disregard|forget|override|bypass|skip|discard)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+|"
           r"my\s+)?(?:previous|prior|earlier|above|preceding|former|other|existing|original|system|initial|safety)\s+"
           r"(?:\w+\s+)?(?:instructions?|prompts?|rules|directions|guidelines|messages|context|constraints|policies|"
           r"guardrails)"),
        _p("ignore all|ignore everything|disregard all|disregard everything|forget all|forget everything", r"\b(?:ignore|disregard|forget)\s+(?:all|everything)\s+(?:you\s+were\s+told|"
           r"(?:that\s+)?(?:came\s+)?(?:before|above))"),
        _p("instruction", r"\b(?:new|updated|real|actual|true|hidden|secret)\s+(?:system\s+)?instructions?\s*:"),
        _p("you are now", r"\byou\s+are\s+now\s+(?:a|an|in|the|my|no\s+longer)\b"),
        _p("important|system|instruction|admin|secret|hidden|im_start|sys>",
           r"<\s*/?\s*(?:important|system|instructions?|admin|secret|hidden|im_start|sys)\s*>"),
        _p("precedence|priority", r"\b(?:takes?|has|have)\s+(?:absolute\s+)?(?:precedence|priority)\s+over\s+"
           r"(?:all\s+|any\s+)?(?:other|previous|prior|user|system|the\s+user)"),
        _p("instrucciones", r"\b(?:ignora(?:r)?|olvida(?:r)?)\s+(?:todas\s+)?(?:las\s+)?instrucciones\s+(?:anteriores|"
           r"previas|del\s+sistema)"),
        _p("instructions|consignes|règles", r"\b(?:ignore[zr]?|oublie[zr]?)\s+(?:toutes\s+)?(?:les\s+)?(?:instructions|"
           r"consignes|r[èe]gles)\s+(?:pr[ée]c[ée]dentes|ant[ée]rieures|du\s+syst[èe]me)"),
        _p("anweisungen|instruktionen|befehle|regeln", r"\b(?:ignorier(?:e|en\s+sie)?|vergiss|vergessen\s+sie)\s+"
           r"(?:alle\s+)?(?:vorherigen|bisherigen|fr[üu]heren|obigen|vorigen)\s+(?:anweisungen|instruktionen|befehle|"
           r"regeln)"),
        _p("instru", r"\b(?:ignore|ignora|esque[çc]a)\s+(?:todas\s+)?(?:as\s+)?instru[çc][õo]es\s+(?:anteriores|"
           r"pr[ée]vias)"),
        _p("istruzioni", r"\b(?:ignora|dimentica)\s+(?:tutte\s+)?(?:le\s+)?istruzioni\s+precedenti"),
        _p("忽略|无视|忘记|忘掉", r"(?:忽略|无视|忘记|忘掉)(?:掉)?(?:之前|以前|先前|上面|上述|前面|所有|全部)(?:的)?"
           r"(?:所有|全部)?(?:的)?(?:指令|指示|说明|规则|提示)"),
        _p("無視|忘れ", r"(?:以前|前|これまで|上記|先)の(?:指示|命令|ルール)を(?:すべて)?(?:無視|忘れ)"),
        _p("игнорир|забуд", r"\b(?:игнорируй|игнорируйте|забудь|забудьте)\s+(?:все\s+)?(?:предыдущие|прежние|"
           r"прошлые|предшествующие|системные)?\s*(?:инструкции|указания|правила)"),
    )),
    Rule("exfiltrate", (
        _p("://|@", rf"\b{_SEND}\b[^.]{{0,120}}?\b(?:{_SECRET_EN}|it|them|this|everything|all|data|results?|output|"
           rf"responses?|answers?|arguments)\b[^.]{{0,80}}?\b(?:to|at|via)\s+{_ADDRESS}"),
        _p("://|@", rf"\b(?:env[íi]a(?:r|lo|la|los|las)?|envoie[zr]?|envoyer|sende[nt]?|schick(?:e|en|t)?|invia(?:re)?|"
           rf"envie)\b[^.]{{0,120}}?{_ADDRESS}"),
        _p("发送|上传|转发|提交", rf"(?:发送|上传|转发|提交)(?:到|至|给)?[^。]{{0,40}}{_ADDRESS}"),
        _p("送信|転送|に送", rf"{_ADDRESS}[^。]{{0,20}}(?:に送信|へ送信|に送|に転送)"),
        _p("отправ", rf"\bотправ\w*\b[^.]{{0,120}}?{_ADDRESS}"),
    )),
    Rule("hide-in-argument", (
        _p("|".join(_SENSITIVE_ANCHORS) + ";param|argument|field|property|input| arg",
           rf"\b(?:pass|put|include|insert|embed|add|append|attach|place|provide|copy|encode|store|write|send|set|"
           rf"fill)\b[^.]{{0,80}}?\b{_SENSITIVE}\b[^.]{{0,60}}?\b(?:as|in|into|inside|within|to|through)\s+"
           rf"(?:the\s+|a\s+)?[`'\"]?[\w.-]+[`'\"]?\s+{_PARAM}"),
        _p("|".join(_SENSITIVE_ANCHORS) + ";param|argument|field|property|input| arg",
           rf"\b(?:as|in|into|inside|within|to)\s+(?:the\s+|a\s+)?[`'\"]?[\w.-]+[`'\"]?\s+{_PARAM}\b[^.]{{0,30}}?,?\s*"
           rf"(?:include|put|pass|add|append|embed|insert|paste|copy)\b[^.]{{0,60}}?\b{_SENSITIVE}\b"),
        _p("conversation|chat|history|context|system prompt;full|entire|whole|complete", r"\b(?:pass|put|include|insert|embed|add|append|paste|copy)\b[^.]{0,40}?"
           r"\b(?:full|entire|whole|complete)\s+(?:conversation|chat|history|context|system\s+prompt|file)\b"),
        _p("parámetro|parametro|argumento|campo", r"\b(?:pasa|incluye|pon|a[ñn]ade|mete|copia)\b[^.]{0,80}"
           r"\b(?:contenido|clave|claves|credenciales|token|contrase[ñn]a|conversaci[óo]n|historial)\b[^.]{0,60}"
           r"\b(?:par[áa]metro|argumento|campo)"),
        _p("paramètre|parametre|argument|champ", r"\b(?:passe[zr]?|inclu[se]z?|mets|mettez|ajoute[zr]?|copie[zr]?)\b"
           r"[^.]{0,80}\b(?:contenu|cl[ée]s?|identifiants|jeton|mot\s+de\s+passe|conversation|historique)\b[^.]{0,60}"
           r"\b(?:param[èe]tre|argument|champ)"),
        _p("parameter|argument|feld;übergib|übergeben|füge|fügen|setze|setzen|schreibe|schreiben|kopiere", r"\b(?:[üu]bergib|[üu]bergeben\s+sie|f[üu]ge|f[üu]gen\s+sie|setze|setzen\s+sie|"
           r"schreibe|schreiben\s+sie|kopiere)\b[^.]{0,80}\b(?:inhalt|schl[üu]ssel|zugangsdaten|token|passwort|"
           r"unterhaltung|verlauf)\w*\b[^.]{0,60}\b(?:parameter|argument|feld)"),
        _p("参数|字段", r"(?:内容|密钥|私钥|凭据|凭证|令牌|密码|对话|聊天记录)[^。]{0,30}(?:放入|填入|写入|附加到|加到|作为)"
           r"[^。]{0,20}(?:参数|字段)"),
        _p("パラメータ|引数|フィールド", r"(?:内容|鍵|秘密鍵|認証情報|トークン|パスワード|会話)[^。]{0,30}"
           r"(?:パラメータ|引数|フィールド)に"),
        _p("параметр|аргумент|поле", r"\b(?:содержимое|ключ|ключи|пароль|токен|учетные\s+данные|переписку)\b[^.]{0,60}"
           r"\b(?:в\s+)?(?:параметр|аргумент|поле)"),
    )),
)


# credential-path: a path where credentials live, read or sent (a verb of reading before
# it), or offered as a schema value (a default, an enum value, an example).
_CREDENTIAL_ANCHORS = ("ssh", "id_", "aws", ".env", "netrc", "pgpass", "credential", "npmrc", "pypirc", ".docker",
                       "kube", "gnupg", "/etc/", ".pem", ".key", ".p12", ".pfx", "keystore", "gcloud", "wallet",
                       "private key", "private_key", "秘密鍵", "私钥", "ключ")
_CREDENTIAL_PATH = re.compile(
    r"~/\.ssh\b|(?<![\w-])\.ssh/|\bid_(?:rsa|dsa|ecdsa|ed25519)\b"
    r"|~/\.aws\b|\.aws/(?:credentials|config)\b|\baws_secret_access_key\b"
    r"|(?<![\w$.\-/])\.env(?:\.(?:local|production|prod|development|dev|staging))?\b(?!\s*(?:var|variable))"
    r"|\.(?:netrc|pgpass|npmrc|pypirc|git-credentials|gnupg)\b|\.docker/config\.json|\.kube/config\b"
    r"|/etc/(?:shadow|gshadow|sudoers|master\.passwd)\b"
    r"|\.config/gcloud\b|application_default_credentials|\bcredentials\.(?:json|csv|db)\b|\bwallet\.dat\b"
    r"|\b[\w-]+\.(?:pem|p12|pfx|keystore|jks|ppk)\b|\b(?:server|private|client|secret)[\w-]*\.key\b"
    r"|\bprivate[\s_]keys?\b|秘密鍵|私钥|приватный\s+ключ|закрытый\s+ключ"
)
_READ_BEFORE = re.compile(
    r"(?:\b(?:read|reads|reading|cat|open|load|include|attach|copy|send|upload|get|fetch|access|grab|collect|dump|"
    r"print|output|paste|contents?\s+of|look\s+(?:at|in)|lee|leer|lea|lire|lis|lisez|lies|lesen|lese|leia|ler|leggi|"
    r"leggere|прочитай|прочти|прочитать|считай)\b|读取|读|查看|打开|読み|読んで|開いて)[^.。]{0,60}$"
)
_VALUE_FIELD = (".default", ".examples", ".const", ".enum")


def _credential_path(text: str, starts: list[tuple[int, str]]) -> Finding | None:
    if not any(anchor in text for anchor in _CREDENTIAL_ANCHORS):
        return None
    for match in _CREDENTIAL_PATH.finditer(text):
        field = _field_at(starts, match.start())
        offered = any(part in field for part in _VALUE_FIELD)
        if offered or _READ_BEFORE.search(text, max(0, match.start() - 80), match.start()):
            return Finding("credential-path", field, match.group(0)[:80])
    return None


def foreign_names(alias: str, own: Iterable[str], others: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """What the shadowing rule looks for in `alias`'s text: distinctive names of other
    upstreams' tools (own names and `other__name`, lowercase) -> that upstream. Build once
    per upstream and list, not per tool."""
    mine = {n.lower() for n in own}
    found: dict[str, str] = {}
    for other, names in others.items():
        if other == alias:
            continue
        for name in names:
            if name.lower() not in mine and _distinctive(name):
                found[name.lower()] = other
                found[f"{other}__{name}".lower()] = other
    return found


def _distinctive(name: str) -> bool:
    """A name a description would not use as a plain word: `send_email`, `createIssue`."""
    return len(name) >= 6 and ("_" in name or "-" in name or any(c.isupper() for c in name[1:]))


def _strings(value: Any, path: str, depth: int = 0) -> Iterator[tuple[str, str]]:
    if depth > 32:
        return
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, inner in value.items():
            if key in ("properties", "patternProperties", "$defs", "definitions") and isinstance(inner, dict):
                for prop, schema in inner.items():
                    yield f"{path}.{key}.{prop}", str(prop)
                    yield from _strings(schema, f"{path}.{key}.{prop}", depth + 1)
            elif key in _TEXT_KEYS or key in _VALUE_KEYS or isinstance(inner, (dict, list)):
                yield from _strings(inner, f"{path}.{key}", depth + 1)
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _strings(inner, f"{path}[{index}]", depth + 1)


def tool_text(tool: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every piece of text in a definition that reaches the model, with where it sits."""
    pieces: list[tuple[str, str]] = []
    for key in _TEXT_KEYS:
        if isinstance(tool.get(key), str):
            pieces.append((key, tool[key]))
    annotations = tool.get("annotations")
    if isinstance(annotations, dict) and isinstance(annotations.get("title"), str):
        pieces.append(("annotations.title", annotations["title"]))
    for key in ("inputSchema", "outputSchema"):
        if isinstance(tool.get(key), dict):
            pieces.extend(_strings(tool[key], key))
    return pieces


@functools.lru_cache(maxsize=8192)  # listings repeat their boilerplate: normalise each string once
def _normal(text: str) -> str:
    if text.isascii():
        return " ".join(text.lower().split())
    text = unicodedata.normalize("NFKC", text).replace("\u2019", "'").replace("\u2018", "'")
    if not text.isascii():
        text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    return " ".join(text.lower().split())


def _joined(pieces: list[tuple[str, str]]) -> tuple[str, list[tuple[int, str]]]:
    """One text (fields joined by a space, so a sentence may run across them) and where
    each field starts in it."""
    starts: list[tuple[int, str]] = []
    parts: list[str] = []
    at = 0
    for field, text in pieces:
        normal = _normal(text)
        if not normal:
            continue
        starts.append((at, field))
        parts.append(normal)
        at += len(normal) + 1
        if at > _MAX_TEXT:
            break
    return " ".join(parts), starts


def _field_at(starts: list[tuple[int, str]], offset: int) -> str:
    field = starts[0][1] if starts else ""
    for start, name in starts:
        if start > offset:
            break
        field = name
    return field


_IDENT = re.compile(r"[a-z][a-z0-9_-]{4,}(?:__[a-z0-9_-]+)?")


def scan_tool(tool: Mapping[str, Any], foreign: Mapping[str, str] | None = None) -> tuple[Finding, ...]:
    """Every rule that finds an instruction to the model in this definition (one finding per rule)."""
    found = scan_tools([tool])[0]
    shadow = shadowing(tool, identifiers(tool), foreign) if foreign else None
    return (*found, shadow) if shadow is not None else found


def identifiers(tool: Mapping[str, Any]) -> frozenset[str]:
    """The tool-name-like words of a definition (what the shadowing rule compares, kept by
    digest: the other upstreams change, the definition's words do not)."""
    return frozenset(_IDENT.findall(_joined(tool_text(tool))[0]))


def shadowing(tool: Mapping[str, Any], words: frozenset[str], foreign: Mapping[str, str]) -> Finding | None:
    """The shadowing finding: a word of this definition that names another upstream's tool."""
    if words.isdisjoint(foreign):
        return None
    text, starts = _joined(tool_text(tool))
    return _shadowing(text, starts, foreign)


_ASCII_LIVE = [(rule.name, pattern) for rule in RULES for pattern in rule.ascii_patterns]
_ALL_LIVE = [(rule.name, pattern) for rule in RULES for pattern in rule.patterns]


def scan_tools(tools: Sequence[Mapping[str, Any]]) -> list[tuple[Finding, ...]]:
    """The findings of every rule but shadowing (which depends on the other upstreams), per tool."""
    found = []
    for tool in tools:
        text, starts = _joined(tool_text(tool))
        found.append(_scan_one(text, starts, _ASCII_LIVE if text.isascii() else _ALL_LIVE))
    return found


def _scan_one(text: str, starts: list[tuple[int, str]], live: list[tuple[str, Anchored]]) -> tuple[Finding, ...]:
    if not text:
        return ()
    findings: list[Finding] = []
    done: set[str] = set()
    for rule, (anchors, pattern) in live:
        if rule in done:
            continue
        span = _search(anchors, pattern, text)
        if span is not None:
            findings.append(Finding(rule, _field_at(starts, span[0]), text[span[0]:span[1]][:80]))
            done.add(rule)
    credential = _credential_path(text, starts)
    if credential is not None:
        findings.append(credential)
    return tuple(findings)


def _shadowing(text: str, starts: list[tuple[int, str]], foreign: Mapping[str, str]) -> Finding | None:
    for match in _IDENT.finditer(text):
        other = foreign.get(match.group(0))
        if other is not None:
            return Finding("shadowing", _field_at(starts, match.start()),
                           f"names '{match.group(0)}' of upstream '{other}'")
    return None
