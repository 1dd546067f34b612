"""The poisoning scan's pattern gates: for each pattern that reads ASCII text (and the
credential paths), groups of literals every match holds one of. Written by
`python -m sidecar.trust.sentences` from the patterns themselves (`required_groups`); read
by `sidecar.trust.sentences`. Regenerate with any rule change (a test compares)."""

from __future__ import annotations

__all__ = ["GATES"]

GATES: dict[str, tuple[tuple[str, ...], ...]] = {
    "\\b(?:do\\s+not|don'?t|never|must\\s+not|mustn'?t|should\\s+not|shouldn'?t|avoid)\\s+(?:\\w+\\s+){0,3}?(?:tell|telling|mention|mentioning|inform|informing|notify|notifying|reveal|revealing|disclose|alert|warn)\\b(?:[^.]|\\.(?=\\S)){0,40}?\\b(?:the\\s+)?(?:user|human|person|operator|customer)s?\\b":
        (('alert', 'disclose', 'inform', 'informing', 'mention', 'mentioning', 'notify', 'notifying', 'reveal', 'revealing', 'tell', 'telling', 'warn'), ('customer', 'human', 'operator', 'person', 'user'), ('avoid', 'don', 'must', 'mustn', 'never', 'not', 'should', 'shouldn')),
    "\\b(?:do\\s+not|don'?t|never)\\s+(?:mention|reveal|disclose)\\s+(?:this|these|that|it|any\\s+of\\s+this)\\b":
        (('disclose', 'mention', 'reveal'), ('don', 'never', 'not')),
    '\\bwithout\\s+(?:\\w+\\s+){0,2}?(?:telling|informing|notifying|alerting|mentioning\\s+(?:it\\s+|this\\s+)?to)\\s+(?:the\\s+)?(?:user|human|person|operator|customer)s?\\b':
        (('alerting', 'informing', 'mentioning', 'notifying', 'telling'), ('without',), ('customer', 'human', 'operator', 'person', 'user')),
    "\\bwithout\\s+(?:the\\s+)?(?:user|human|person|operator|customer)s?(?:'s)?\\s+(?:knowing|knowledge|noticing|seeing)\\b":
        (('without',), ('knowing', 'knowledge', 'noticing', 'seeing'), ('customer', 'human', 'operator', 'person', 'user')),
    "\\b(?:the\\s+)?(?:user|human|person|operator|customer)s?\\s+(?:must|should|need|needs|is)\\s*(?:not|n't|never)\\s+(?:to\\s+)?(?:know|see|be\\s+told|find\\s+out|notice|learn|be\\s+informed|be\\s+aware)\\b":
        (('customer', 'human', 'operator', 'person', 'user'), ('aware', 'find', 'informed', 'know', 'learn', 'notice', 'see', 'told')),
    '\\b(?:keep|hide)\\s+(?:this|these|it|that)(?:\\s+\\w+)?\\s+(?:secret|hidden|private|confidential)\\b':
        (('confidential', 'hidden', 'private', 'secret'), ('hide', 'keep')),
    '\\bhide\\s+(?:this|it|that|them)\\s+from\\s+(?:the\\s+)?(?:user|human|person|operator|customer)s?\\b':
        (('customer', 'human', 'operator', 'person', 'user'), ('from',), ('hide',)),
    '\\b(?:silently|secretly|covertly|quietly)\\s+(?:also\\s+)?(?:read|send|include|add|attach|copy|upload|forward|pass|collect|append|call|post)\\b':
        (('covertly', 'quietly', 'secretly', 'silently'), ('add', 'append', 'attach', 'call', 'collect', 'copy', 'forward', 'include', 'pass', 'post', 'read', 'send', 'upload')),
    '\\bno\\s+(?:le\\s+)?(?:digas|menciones|informes|cuentes|reveles|avises|muestres)\\b(?:[^.]|\\.(?=\\S)){0,40}\\busuario':
        (('usuario',), ('avises', 'cuentes', 'digas', 'informes', 'menciones', 'muestres', 'reveles')),
    '\\bsin\\s+(?:que\\s+el\\s+usuario\\s+(?:lo\\s+)?(?:sepa|note|vea)|informar|avisar|decir(?:le)?)\\b(?:[^.]|\\.(?=\\S)){0,20}usuario':
        (('usuario',), ('avisar', 'decir', 'informar', 'usuario'), ('sin',)),
    '\\bel\\s+usuario\\s+no\\s+(?:debe|deber[íi]a|tiene\\s+que)\\s+(?:saber|enterarse|ver)':
        (('usuario',), ('debe', 'deber', 'tiene'), ('enterarse', 'saber', 'ver')),
    "\\bne\\s+(?:le\\s+|lui\\s+|l'|rien\\s+)?(?:dis|dites|mentionne[zs]?|informe[zs]?|r[ée]v[èe]le[zs]?|signale[zs]?|pr[ée]viens|pr[ée]venez)\\b(?:[^.]|\\.(?=\\S)){0,40}\\b(?:pas|rien|jamais)\\b(?:[^.]|\\.(?=\\S)){0,40}utilisateur":
        (('utilisateur',), ('jamais', 'pas', 'rien')),
    '\\bsans\\s+(?:le\\s+dire|pr[ée]venir|informer|avertir|en\\s+informer)\\b(?:[^.]|\\.(?=\\S)){0,10}utilisateur':
        (('utilisateur',), ('avertir', 'dire', 'informer', 'venir'), ('sans',)),
    "\\bl'utilisateur\\s+ne\\s+doit\\s+(?:pas|jamais)\\s+(?:savoir|voir|[êe]tre\\s+inform[ée]|le\\s+savoir)":
        (("l'utilisateur",), ('doit',), ('inform', 'savoir', 'voir')),
    '\\b(?:sag|sage|sagen\\s+sie|erw[äa]hne|erw[äa]hnen\\s+sie|informiere|verrate|verraten\\s+sie)\\b(?:[^.]|\\.(?=\\S)){0,40}\\b(?:benutzer|nutzer|anwender)\\w*\\b(?:[^.]|\\.(?=\\S)){0,30}\\bnicht':
        (('anwender', 'benutzer', 'nutzer'), ('nicht',), ('erw', 'hnen', 'informiere', 'sag', 'sage', 'sagen', 'verrate', 'verraten')),
    '\\b(?:dem|den)\\s+(?:benutzer|nutzer|anwender)\\w*\\s+nicht(?:s)?\\s+(?:\\w+\\s+)?(?:sagen|mitteilen|erw[äa]hnen|informieren|verraten|zeigen)':
        (('anwender', 'benutzer', 'nutzer'), ('nicht',), ('hnen', 'informieren', 'mitteilen', 'sagen', 'verraten', 'zeigen')),
    '\\bohne\\s+(?:den|dem|die)\\s+(?:benutzer|nutzer|anwender)\\w*\\s+(?:zu\\s+)?(?:informieren|benachrichtigen|fragen)':
        (('anwender', 'benutzer', 'nutzer'), ('benachrichtigen', 'fragen', 'informieren'), ('ohne',)),
    '\\bverschweig':
        (('verschweig',),),
    '\\bn[ãa]o\\s+(?:diga|conte|mencione|informe|revele|avise)\\b(?:[^.]|\\.(?=\\S)){0,40}\\b(?:usu[áa]rio|utilizador)':
        (('avise', 'conte', 'diga', 'informe', 'mencione', 'revele'), ('rio', 'tilizador')),
    '\\bsem\\s+(?:informar|avisar|contar\\s+(?:ao|para\\s+o))\\s+(?:o\\s+|ao\\s+)?(?:usu[áa]rio|utilizador)':
        (('avisar', 'contar', 'informar'), ('rio', 'tilizador'), ('sem',)),
    '\\bnon\\s+(?:dire|dirlo|menzionare|informare|rivelare|avvisare)\\b(?:[^.]|\\.(?=\\S)){0,40}\\butente':
        (('utente',), ('avvisare', 'dire', 'dirlo', 'informare', 'menzionare', 'rivelare'), ('non',)),
    '\\bsenza\\s+(?:informare|avvisare|dire)\\b(?:[^.]|\\.(?=\\S)){0,10}utente':
        (('utente',), ('senza',), ('avvisare', 'dire', 'informare')),
    '\\b(?:ignore|disregard|forget|override|bypass|skip|discard)\\s+(?:all\\s+|any\\s+)?(?:of\\s+)?(?:the\\s+|your\\s+|my\\s+)?(?:previous|prior|earlier|above|preceding|former|other|existing|original|system|initial|safety)\\s+(?:\\w+\\s+)?(?:instructions?|prompts?|rules|directions|guidelines|messages|context|constraints|policies|guardrails)':
        (('above', 'earlier', 'existing', 'former', 'initial', 'original', 'other', 'preceding', 'previous', 'prior', 'safety', 'system'), ('constraints', 'context', 'directions', 'guardrails', 'guidelines', 'instruction', 'messages', 'policies', 'prompt', 'rules'), ('bypass', 'discard', 'disregard', 'forget', 'ignore', 'override', 'skip')),
    '\\b(?:ignore|disregard|forget)\\s+(?:all|everything)\\s+(?:you\\s+were\\s+told|(?:that\\s+)?(?:came\\s+)?(?:before|above))':
        (('disregard', 'forget', 'ignore'), ('above', 'before', 'were'), ('all', 'everything')),
    '\\b(?:new|updated|real|actual|true|hidden|secret)\\s+(?:system\\s+)?instructions?\\s*:':
        (('instruction',), ('actual', 'hidden', 'new', 'real', 'secret', 'true', 'updated')),
    '\\byou\\s+are\\s+now\\s+(?:a|an|in|the|my|no\\s+longer)\\b':
        (('are',), ('now',), ('you',)),
    '<\\s*/?\\s*(?:important|system|instructions?|admin|secret|hidden|im_start|sys)\\s*>':
        (('admin', 'hidden', 'im_start', 'important', 'instruction', 'secret', 'sys', 'system'),),
    '\\b(?:takes?|has|have)\\s+(?:absolute\\s+)?(?:precedence|priority)\\s+over\\s+(?:all\\s+|any\\s+)?(?:other|previous|prior|user|system|the\\s+user)':
        (('ecedence', 'iority'), ('other', 'previous', 'prior', 'system', 'user'), ('over',)),
    '\\b(?:ignora(?:r)?|olvida(?:r)?)\\s+(?:todas\\s+)?(?:las\\s+)?instrucciones\\s+(?:anteriores|previas|del\\s+sistema)':
        (('instrucciones',), ('anteriores', 'previas', 'sistema'), ('ignora', 'olvida')),
    '\\b(?:ignore[zr]?|oublie[zr]?)\\s+(?:toutes\\s+)?(?:les\\s+)?(?:instructions|consignes|r[èe]gles)\\s+(?:pr[ée]c[ée]dentes|ant[ée]rieures|du\\s+syst[èe]me)':
        (('ignore', 'oublie'), ('consignes', 'gles', 'instructions'), ('dentes', 'rieures', 'syst')),
    '\\b(?:ignorier(?:e|en\\s+sie)?|vergiss|vergessen\\s+sie)\\s+(?:alle\\s+)?(?:vorherigen|bisherigen|fr[üu]heren|obigen|vorigen)\\s+(?:anweisungen|instruktionen|befehle|regeln)':
        (('ignorier', 'vergessen', 'vergiss'), ('anweisungen', 'befehle', 'instruktionen', 'regeln'), ('bisherigen', 'heren', 'obigen', 'vorherigen', 'vorigen')),
    '\\b(?:ignore|ignora|esque[çc]a)\\s+(?:todas\\s+)?(?:as\\s+)?instru[çc][õo]es\\s+(?:anteriores|pr[ée]vias)':
        (('instru',), ('esque', 'ignora', 'ignore'), ('anteriores', 'vias')),
    '\\b(?:ignora|dimentica)\\s+(?:tutte\\s+)?(?:le\\s+)?istruzioni\\s+precedenti':
        (('istruzioni',), ('precedenti',), ('dimentica', 'ignora')),
    '\\b(?:send|post|upload|forward|transmit|exfiltrate|report|submit|leak|beacon|mail|email|e-mail|deliver)\\b(?:[^.]|\\.(?=\\S)){0,120}?\\b(?:(?:contents?|conversation|chat|history|previous\\s+messages|system\\s+prompt|instructions|keys?|tokens?|credentials?|secrets?|passwords?|passphrases?|env(?:ironment)?\\s+variables?|cookies?|session|private|ssh|id_rsa|\\.env|file)|it|them|this|everything|all|data|results?|output|responses?|answers?|arguments)\\b(?:[^.]|\\.(?=\\S)){0,80}?\\b(?:to|at|via)\\s+(?:https?://|[\\w.+-]+@[\\w-]+\\.[\\w.]+|\\d{1,3}(?:\\.\\d{1,3}){3})':
        (('beacon', 'deliver', 'e-mail', 'email', 'exfiltrate', 'forward', 'leak', 'mail', 'post', 'report', 'send', 'submit', 'transmit', 'upload'),),
    '\\b(?:env[íi]a(?:r|lo|la|los|las)?|envoie[zr]?|envoyer|sende[nt]?|schick(?:e|en|t)?|invia(?:re)?|envie)\\b(?:[^.]|\\.(?=\\S)){0,120}?(?:https?://|[\\w.+-]+@[\\w-]+\\.[\\w.]+|\\d{1,3}(?:\\.\\d{1,3}){3})':
        (('env', 'envie', 'envoie', 'envoyer', 'invia', 'schick', 'sende'),),
    '\\b(?:pass|put|include|insert|embed|add|append|attach|place|provide|copy|encode|store|write|send|set|fill)\\b(?:[^.]|\\.(?=\\S)){0,80}?\\b(?:contents?\\s+of|conversation|chat\\s+history|previous\\s+messages|system\\s+prompt|credentials?|secrets?|passwords?|passphrases?|api[\\s_-]?keys?|private[\\s_-]?keys?|(?:access|auth|api|bearer|session|refresh)[\\s_-]?tokens?|ssh|id_rsa|\\.env|env(?:ironment)?\\s+var(?:iable)?s?|cookies?)\\b(?:[^.]|\\.(?=\\S)){0,60}?\\b(?:as|in|into|inside|within|to|through)\\s+(?:the\\s+|a\\s+)?[`\'\\"]?[\\w.-]+[`\'\\"]?\\s+(?:parameter|argument|field|param|arg|property|input)':
        (('.env', 'api', 'content', 'conversation', 'cookie', 'credential', 'env', 'history', 'id_rsa', 'passphrase', 'password', 'previous', 'private', 'secret', 'ssh', 'system', 'token'), ('add', 'append', 'attach', 'copy', 'embed', 'encode', 'fill', 'include', 'insert', 'pass', 'place', 'provide', 'put', 'send', 'set', 'store', 'write'), ('arg', 'argument', 'field', 'input', 'param', 'parameter', 'property')),
    '\\b(?:as|in|into|inside|within|to)\\s+(?:the\\s+|a\\s+)?[`\'\\"]?[\\w.-]+[`\'\\"]?\\s+(?:parameter|argument|field|param|arg|property|input)\\b(?:[^.]|\\.(?=\\S)){0,30}?,?\\s*(?:include|put|pass|add|append|embed|insert|paste|copy)\\b(?:[^.]|\\.(?=\\S)){0,60}?\\b(?:contents?\\s+of|conversation|chat\\s+history|previous\\s+messages|system\\s+prompt|credentials?|secrets?|passwords?|passphrases?|api[\\s_-]?keys?|private[\\s_-]?keys?|(?:access|auth|api|bearer|session|refresh)[\\s_-]?tokens?|ssh|id_rsa|\\.env|env(?:ironment)?\\s+var(?:iable)?s?|cookies?)\\b':
        (('.env', 'api', 'content', 'conversation', 'cookie', 'credential', 'env', 'history', 'id_rsa', 'passphrase', 'password', 'previous', 'private', 'secret', 'ssh', 'system', 'token'), ('add', 'append', 'copy', 'embed', 'include', 'insert', 'pass', 'paste', 'put'), ('arg', 'argument', 'field', 'input', 'param', 'parameter', 'property')),
    '\\b(?:pass|put|include|insert|embed|add|append|paste|copy)\\b(?:[^.]|\\.(?=\\S)){0,40}?\\b(?:full|entire|whole|complete)\\s+(?:conversation|chat|history|context|system\\s+prompt|file)\\b':
        (('chat', 'context', 'conversation', 'file', 'history', 'system'), ('complete', 'entire', 'full', 'whole'), ('add', 'append', 'copy', 'embed', 'include', 'insert', 'pass', 'paste', 'put')),
    '\\b(?:pasa|incluye|pon|a[ñn]ade|mete|copia)\\b(?:[^.]|\\.(?=\\S)){0,80}\\b(?:contenido|clave|claves|credenciales|token|contrase[ñn]a|conversaci[óo]n|historial)\\b(?:[^.]|\\.(?=\\S)){0,60}\\b(?:par[áa]metro|argumento|campo)':
        (('argumento', 'campo', 'metro'), ('clave', 'claves', 'contenido', 'contrase', 'conversaci', 'credenciales', 'historial', 'token'), ('ade', 'copia', 'incluye', 'mete', 'pasa', 'pon')),
    '\\b(?:passe[zr]?|inclu[se]z?|mets|mettez|ajoute[zr]?|copie[zr]?)\\b(?:[^.]|\\.(?=\\S)){0,80}\\b(?:contenu|cl[ée]s?|identifiants|jeton|mot\\s+de\\s+passe|conversation|historique)\\b(?:[^.]|\\.(?=\\S)){0,60}\\b(?:param[èe]tre|argument|champ)':
        (('argument', 'champ', 'param'), ('ajoute', 'copie', 'inclu', 'mets', 'mettez', 'passe')),
    '\\b(?:[üu]bergib|[üu]bergeben\\s+sie|f[üu]ge|f[üu]gen\\s+sie|setze|setzen\\s+sie|schreibe|schreiben\\s+sie|kopiere)\\b(?:[^.]|\\.(?=\\S)){0,80}\\b(?:inhalt|schl[üu]ssel|zugangsdaten|token|passwort|unterhaltung|verlauf)\\w*\\b(?:[^.]|\\.(?=\\S)){0,60}\\b(?:parameter|argument|feld)':
        (('argument', 'feld', 'parameter'), ('inhalt', 'passwort', 'schl', 'token', 'unterhaltung', 'verlauf', 'zugangsdaten')),
    '~/\\.ssh\\b|(?<![\\w-])\\.ssh/|\\bid_(?:rsa|dsa|ecdsa|ed25519)\\b|~/\\.aws\\b|\\.aws/(?:credentials|config)\\b|\\baws_secret_access_key\\b|(?<![\\w$.\\-/])\\.env(?:\\.(?:local|production|prod|development|dev|staging))?\\b(?!\\s*(?:var|variable))|\\.(?:netrc|pgpass|npmrc|pypirc|git-credentials|gnupg)\\b|\\.docker/config\\.json|\\.kube/config\\b|/etc/(?:shadow|gshadow|sudoers|master\\.passwd)\\b|\\.config/gcloud\\b|application_default_credentials|\\bcredentials\\.(?:json|csv|db)\\b|\\bwallet\\.dat\\b|\\b[\\w-]+\\.(?:pem|p12|pfx|keystore|jks|ppk)\\b|\\b(?:server|private|client|secret)[\\w-]*\\.key\\b|\\bprivate[\\s_]keys?\\b|秘密鍵|私钥|приватный\\s+ключ|закрытый\\s+ключ':
        (('.aws/c', '.config/gcloud', '.docker/config.json', '.env', '.kube/config', '.ssh/', 'application_default_credentials', 'aws_secret_access_key', 'client', 'credentials.', 'git-credentials', 'gnupg', 'gshadow', 'id_', 'jks', 'keystore', 'master.passwd', 'netrc', 'npmrc', 'p12', 'pem', 'pfx', 'pgpass', 'ppk', 'private', 'pypirc', 'secret', 'server', 'shadow', 'sudoers', 'wallet.dat', '~/.aws', '~/.ssh', 'закрытый', 'приватный', '私钥', '秘密鍵'),),
}
