"""The poisoning scan's rules, as data: each a kind of instruction aimed at the model,
written as patterns in several languages, each pattern with the anchor words it cannot
match without (`sidecar.trust.scan` runs them). Change `RULES_VERSION` (kept in
`sidecar.trust.findings`, beside what it versions) with any rule, so scan results kept
with pins are redone.

Each pattern is compiled the first time text holding its anchors reaches it
(`LazyPattern`): compiling all of them costs about 30 ms, which start-up does not pay,
and most listings never wake most rules. The costliest, tried on many windows of a big
listing, carry a cheaper piece of themselves (`needs`) that a window must hold first.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Iterator

from sidecar.trust.findings import RULES_VERSION

__all__ = ["Anchored", "CONFUSABLES", "CREDENTIAL_ANCHORS", "CREDENTIAL_PATH", "JSON_TYPES", "LazyPattern",
           "READ_BEFORE", "RULES", "RULES_VERSION", "Rule", "SCHEMA_WORDS", "VALUE_FIELDS"]



class LazyPattern:
    """A regular expression compiled on its first search; `needs`, when given, a contiguous
    piece of it (so no text matches it without matching `needs`), cheaper to search: a
    window it is not in is not searched with the whole."""

    __slots__ = ("source", "needs", "_compiled")

    def __init__(self, source: str, needs: LazyPattern | None = None) -> None:
        self.source = source
        self.needs = needs
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.source)
        return self._compiled

    def search(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.search(text, pos, endpos)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(text)


Anchored = tuple[tuple[tuple[str, ...], ...], LazyPattern]


class Rule:
    """A named kind of instruction and its patterns (each with its anchors)."""

    def __init__(self, name: str, patterns: tuple[Anchored, ...]) -> None:
        self.name = name
        self.patterns = patterns
        # the patterns that can match ASCII text (every anchor group holds an ASCII anchor),
        # with only their ASCII anchors: no other can be found in ASCII text
        self.ascii_patterns = tuple((tuple(tuple(a for a in g if a.isascii()) for g in groups), pattern)
                                    for groups, pattern in patterns
                                    if all(any(a.isascii() for a in g) for g in groups))


_NOT_SENTENCE_END = r"(?:[^.]|\.(?=\S))"  # `[^.]` in a pattern: a dot inside `.env` or `a.b` ends nothing


def _written_forms(anchor: str) -> tuple[str, ...]:
    """`anchor` and the same word without its accents ("règles", "regles"): a pattern that
    allows either spelling (`r[èe]gles`) must be tried on text holding either."""
    if anchor.isascii():  # no accent to take off (most anchors): answered at C speed
        return (anchor,)
    bare = "".join(c for c in unicodedata.normalize("NFD", anchor) if not unicodedata.combining(c))
    return (anchor,) if bare == anchor or not bare else (anchor, unicodedata.normalize("NFC", bare))


def _p(anchors: str, pattern: str, needs: str | None = None) -> Anchored:
    """A pattern, run only on text that holds an anchor of every group (groups split by
    `;`, alternatives by `|`: words the pattern cannot match without); `needs`: a contiguous
    piece of `pattern` (a leading `\\b` may be left out), searched first in each window."""
    groups = tuple(tuple(dict.fromkeys(form for anchor in group.split("|") for form in _written_forms(anchor)))
                   for group in anchors.split(";"))
    first = LazyPattern(needs.replace("[^.]", _NOT_SENTENCE_END)) if needs is not None else None
    return groups, LazyPattern(pattern.replace("[^.]", _NOT_SENTENCE_END), first)


_USER_EN = r"(?:the\s+)?(?:user|human|person|operator|customer)s?"
_SEND = r"(?:send|post|upload|forward|transmit|exfiltrate|report|submit|leak|beacon|mail|email|e-mail|deliver)"
_SECRET_EN = (r"(?:contents?|conversation|chat|history|previous\s+messages|system\s+prompt|instructions|"
              r"keys?|tokens?|credentials?|secrets?|passwords?|passphrases?|env(?:ironment)?\s+variables?|"
              r"cookies?|session|private|ssh|id_rsa|\.env|file)")
_SENSITIVE = (r"(?:contents?\s+of|conversation|chat\s+history|previous\s+messages|system\s+prompt|credentials?|"
              r"secrets?|passwords?|passphrases?|api[\s_-]?keys?|private[\s_-]?keys?|(?:access|auth|api|bearer|session|"
              r"refresh)[\s_-]?tokens?|ssh|id_rsa|\.env|env(?:ironment)?\s+var(?:iable)?s?|cookies?)")
# `[\s_-]?` between two words: each joined by a space, "_", "-" or nothing
_JOINED = tuple(f"{first}{joint}{second}" for first, second in (
    ("api", "key"), ("private", "key"), *((kind, "token") for kind in ("access", "auth", "api", "bearer", "session", "refresh")))
    for joint in (" ", "_", "-", ""))
_SENSITIVE_ANCHORS = ("contents of", "content of", "conversation", "chat history", "previous messages", "system prompt",
                      "credential", "secret", "password", "passphrase", *_JOINED, "ssh", "id_rsa", ".env",
                      "environment var", "env var", "cookie")
_PARAM = r"(?:parameter|argument|field|param|arg|property|input)"
_ADDRESS = r"(?:https?://|[\w.+-]+@[\w-]+\.[\w.]+|\d{1,3}(?:\.\d{1,3}){3})"
_TELL = "tell|mention|inform|notif|reveal|disclos|alert|warn"

RULES: tuple[Rule, ...] = (
    Rule("conceal", (
        _p(_TELL, rf"\b(?:do\s+not|don'?t|never|must\s+not|mustn'?t|should\s+not|shouldn'?t|avoid)\s+(?:\w+\s+){{0,3}}?"
           rf"(?:tell|telling|mention|mentioning|inform|informing|notify|notifying|reveal|revealing|disclose|alert|"
           rf"warn)\b[^.]{{0,40}}?\b{_USER_EN}\b",
           needs=r"(?:do\s+not|don'?t|never|must\s+not|mustn'?t|should\s+not|shouldn'?t|avoid)\s+(?:\w+\s+){0,3}?"
                 r"(?:tell|telling|mention|mentioning|inform|informing|notify|notifying|reveal|revealing|disclose|alert|"
                 r"warn)\b"),
        _p("mention|reveal|disclos", r"\b(?:do\s+not|don'?t|never)\s+(?:mention|reveal|disclose)\s+(?:this|these|that|"
           r"it|any\s+of\s+this)\b", needs=r"(?:do\s+not|don'?t|never)\s+"),
        _p("without;telling|informing|notifying|alerting|mentioning",
           rf"\bwithout\s+(?:\w+\s+){{0,2}}?(?:telling|informing|notifying|alerting|mentioning\s+(?:it\s+|"
           rf"this\s+)?to)\s+{_USER_EN}\b"),
        _p("without;knowing|knowledge|noticing|seeing",
           rf"\bwithout\s+{_USER_EN}(?:'s)?\s+(?:knowing|knowledge|noticing|seeing)\b"),
        _p("not|n't|never;know|see|be told|find out|notice|learn|be informed|be aware", rf"\b{_USER_EN}\s+(?:must|should|need|needs|is)\s*(?:not|n't|never)\s+(?:to\s+)?"
           rf"(?:know|see|be\s+told|find\s+out|notice|learn|be\s+informed|be\s+aware)\b",
           needs=r"(?:must|should|need|needs|is)\s*(?:not|n't|never)\s+"),
        _p("secret|hidden|private|confidential", r"\b(?:keep|hide)\s+(?:this|these|it|that)(?:\s+\w+)?\s+(?:secret|"
           r"hidden|private|confidential)\b", needs=r"(?:keep|hide)\s+(?:this|these|it|that)"),
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
        _p("ignore|disregard|forget|override|bypass|skip|discard;"
           "instruction|prompt|rules|directions|guidelines|messages|context|constraints|polic|guardrail;"
           "previous|prior|earlier|above|preceding|former|other|existing|original|system|initial|safety",
           r"\b(?:ignore|disregard|forget|override|bypass|skip|discard)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+|"
           r"my\s+)?(?:previous|prior|earlier|above|preceding|former|other|existing|original|system|initial|safety)\s+"
           r"(?:\w+\s+)?(?:instructions?|prompts?|rules|directions|guidelines|messages|context|constraints|policies|"
           r"guardrails)"),
        _p("ignore all|ignore everything|disregard all|disregard everything|forget all|forget everything", r"\b(?:ignore|disregard|forget)\s+(?:all|everything)\s+(?:you\s+were\s+told|"
           r"(?:that\s+)?(?:came\s+)?(?:before|above))"),
        _p("instruction", r"\b(?:new|updated|real|actual|true|hidden|secret)\s+(?:system\s+)?instructions?\s*:"),
        _p("you are now", r"\byou\s+are\s+now\s+(?:a|an|in|the|my|no\s+longer)\b"),
        _p("important|system|instruction|admin|secret|hidden|im_start|sys",
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
           rf"(?:the\s+|a\s+)?[`'\"]?[\w.-]+[`'\"]?\s+{_PARAM}",
           needs=rf"(?:as|in|into|inside|within|to|through)\s+(?:the\s+|a\s+)?[`'\"]?[\w.-]+[`'\"]?\s+{_PARAM}"),
        _p("|".join(_SENSITIVE_ANCHORS) + ";param|argument|field|property|input| arg",
           rf"\b(?:as|in|into|inside|within|to)\s+(?:the\s+|a\s+)?[`'\"]?[\w.-]+[`'\"]?\s+{_PARAM}\b[^.]{{0,30}}?,?\s*"
           rf"(?:include|put|pass|add|append|embed|insert|paste|copy)\b[^.]{{0,60}}?\b{_SENSITIVE}\b",
           needs=rf"{_PARAM}\b[^.]{{0,30}}?,?\s*(?:include|put|pass|add|append|embed|insert|paste|copy)\b"),
        _p("conversation|chat|history|context|system prompt|file;full|entire|whole|complete", r"\b(?:pass|put|include|insert|embed|add|append|paste|copy)\b[^.]{0,40}?"
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
# (each alternative of CREDENTIAL_PATH holds one of them whole: "~/.ssh", not "ssh", which
# random letters hold every 17,576 and would send the whole text through the pattern)
CREDENTIAL_ANCHORS = ("~/.ssh", ".ssh/", "id_", "~/.aws", ".aws/", "aws_secret_access_key", ".env", ".netrc",
                      ".pgpass", "credential", ".npmrc", ".pypirc", ".gnupg", ".docker/", ".kube/", "/etc/", ".pem",
                      ".key", ".p12", ".pfx", ".keystore", "/gcloud", "wallet.dat", "private key", "private_key",
                      "秘密鍵", "私钥", "ключ")
# (its alternatives in four parts, in order: those before the two that run over a word of
# any length, those two, those after; the scan finds those two its own way, `scan._runs`)
CREDENTIAL_BEFORE = (
    r"~/\.ssh\b|(?<![\w-])\.ssh/|\bid_(?:rsa|dsa|ecdsa|ed25519)\b"
    r"|~/\.aws\b|\.aws/(?:credentials|config)\b|\baws_secret_access_key\b"
    r"|(?<![\w$.\-/])\.env(?:\.(?:local|production|prod|development|dev|staging))?\b(?!\s*(?:var|variable))"
    r"|\.(?:netrc|pgpass|npmrc|pypirc|git-credentials|gnupg)\b|\.docker/config\.json|\.kube/config\b"
    r"|/etc/(?:shadow|gshadow|sudoers|master\.passwd)\b"
    r"|\.config/gcloud\b|application_default_credentials|\bcredentials\.(?:json|csv|db)\b|\bwallet\.dat\b"
)
CREDENTIAL_RUN = r"\b[\w-]+\.(?:pem|p12|pfx|keystore|jks|ppk)\b"  # a key file: a word, then its extension
CREDENTIAL_NAMED = r"\b(?:server|private|client|secret)[\w-]*\.key\b"  # a key named so, to its `.key`
CREDENTIAL_AFTER = r"\bprivate[\s_]keys?\b|秘密鍵|私钥|приватный\s+ключ|закрытый\s+ключ"
CREDENTIAL_PATH = LazyPattern("|".join((CREDENTIAL_BEFORE, CREDENTIAL_RUN, CREDENTIAL_NAMED, CREDENTIAL_AFTER)))
READ_BEFORE = LazyPattern(
    r"(?:\b(?:read|reads|reading|cat|open|load|include|attach|copy|send|upload|get|fetch|access|grab|collect|dump|"
    r"print|output|paste|contents?\s+of|look\s+(?:at|in)|lee|leer|lea|lire|lis|lisez|lies|lesen|lese|leia|ler|leggi|"
    r"leggere|прочитай|прочти|прочитать|считай)\b|读取|读|查看|打开|読み|読んで|開いて)[^.。]{0,60}$"
)
VALUE_FIELDS = (".default", ".examples", ".const", ".enum")


# Letters of other scripts that read as Latin ones (lowercase: the scan folds case first).
# Cyrillic, Greek, Armenian and a few Latin variants; fullwidth and mathematical letters
# are already plain after NFKC. Read only by a second pass of the rules (the first pass
# keeps the text as written, so the Russian rules still see Cyrillic).
_LOOK_ALIKES = {
    "a": "аɑαа⍺", "b": "ьвβƅ", "c": "сϲⅽ", "d": "ԁⅾ", "e": "еёεҽ℮", "g": "ɡց", "h": "һнհ", "i": "іїιı¡ɩ",
    "j": "јϳ", "k": "кκ", "l": "ӏℓ", "m": "мⅿ", "n": "ηпո", "o": "оοօσ০", "p": "рρ", "q": "ԛզ", "r": "гᴦ",
    "s": "ѕꜱ", "t": "тτ", "u": "υսμ", "v": "νѵ", "w": "ԝѡω", "x": "хχ", "y": "уүγ", "z": "ᴢ",
}
CONFUSABLES = {ord(other): latin for latin, others in _LOOK_ALIKES.items() for other in others if other != latin}
# Keys that are JSON Schema's (or a tool definition's) own vocabulary: fixed words, so the
# scan does not read them as text (property names and any other key it reads).
SCHEMA_WORDS = frozenset((
    "$anchor $comment $defs $dynamicAnchor $dynamicRef $id $ref $schema $vocabulary _meta additionalItems "
    "additionalProperties allOf annotations anyOf const contains contentEncoding contentMediaType contentSchema "
    "default definitions dependencies dependentRequired dependentSchemas deprecated description destructiveHint "
    "else enum examples exclusiveMaximum exclusiveMinimum format icons idempotentHint if inputSchema items maxItems "
    "maxLength maxProperties maximum mimeType minItems minLength minProperties minimum multipleOf not oneOf "
    "openWorldHint outputSchema pattern patternProperties prefixItems properties propertyNames readOnly readOnlyHint "
    "required sizes src then title type unevaluatedItems unevaluatedProperties uniqueItems writeOnly"
).split())
JSON_TYPES = frozenset(("string", "number", "integer", "boolean", "object", "array", "null"))
