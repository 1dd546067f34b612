"""A small general lexicon: the common words of software tools in nine other languages,
and English words people use for the same action.

Owns the table and the lookups. Each row is one concept: the English words a catalog
would use, then Spanish, German, French, Portuguese, Italian, Russian, Chinese, Japanese
and Korean words for it. In the Latin and Cyrillic columns a trailing `*` marks a stem
that matches any word it starts (`borr*`: borrar, borra, borrado); Chinese, Japanese and
Korean entries match anywhere inside a run of those scripts, which has no spaces (or, in
Korean, carries its endings attached). The table is general vocabulary of software,
cloud, office and media tools, written for this project; it names no tool of any catalog.
"""

from __future__ import annotations

import functools

from sidecar.catalog.search.text import fold, is_cjk, stem

__all__ = ["english_synonyms", "translations"]

_LANGUAGES = 9
# en | es | de | fr | pt | it | ru | zh | ja | ko
_TABLE = """
create new|crear* nuevo* nueva*|erstell* anleg* neue neuen neues neu|creer* cree* nouveau* nouvelle*|criar* cria* novo* nova*|crea* creare nuovo* nuova*|созда* нов*|创建 新建 新的|作成 新しい 新規|생성 만들 새
delete remove|borr* elimin* suprim*|losch* entfern*|supprim* effac* retir*|exclu* apag* remov*|elimin* cancell* rimuov*|удал* стер*|删除 删掉 移除|削除 消し 消去|삭제 지워 제거
list all|list* todos todas|auflist* alle|list* tous toutes|list* todos todas|elenc* tutti tutte|список спис* все|列出 列表 所有 全部|一覧 すべて 全て|목록 모든 전체
show view get|mostr* ver|zeig* anzeig*|montr* affich* voir|mostr* ver|mostr* visualizz* vedere|покаж* показ* посмотр*|查看 显示 看看 获取|見せ 表示 確認 取得|보여 조회 확인
update change edit modify|actualiz* cambi* modific* edit*|aktualisier* ander* bearbeit*|mettre modifi* chang*|atualiz* mud* alter* edit*|aggiorn* cambi* modific*|измен* обнов* редакт*|更新 修改 更改 编辑|更新 変更 編集|업데이트 변경 수정
start launch|inici* arranc* lanz*|start* begin*|demarr* lanc*|inici* lanc*|avvi* lanc*|запуст* старт*|启动 开始 开启|起動 開始|시작 실행
stop|deten* par*|stopp* anhalt*|arret* stopp*|par* interromp*|ferm* arrest*|останов* стоп|停止 关闭|停止 止め|중지 멈춰 정지
restart reboot|reinici*|neustart*|redemarr*|reinici*|riavvi*|перезапуст* перезагруз*|重启 重新启动|再起動|재시작 재부팅
add|agreg* anad*|hinzufug* fug*|ajout*|adicion* acrescent*|aggiung*|добав*|添加 加到 增加 加入|追加|추가
search find|busc* encontr*|such* find*|cherch* trouv* recherch*|busc* procur* encontr*|cerc* trov*|найд* найти ищ* поиск*|搜索 查找 查询 寻找|検索 探し 探す|검색 찾아 찾기
send|envi*|send* schick* versend*|envoy*|envi*|invi* mand*|отправ* посл*|发送 发给|送信 送っ 送る|보내 전송
move|mov* traslad*|verschieb* beweg*|deplac*|mov* mud*|spost* muov*|перемест* перенес*|移动 移到|移動|이동 옮겨
copy|copi*|kopier*|copi*|copi*|copi*|копир* скопир*|复制 拷贝|コピー 複製|복사
download|descarg* baj*|herunterlad*|telecharg*|baix* descarreg*|scaric*|скача* загруз*|下载|ダウンロード|다운로드 내려받
upload|sub* carg*|hochlad*|televers* charg*|carreg* envi*|caric*|загруз*|上传|アップロード|업로드 올려
run execute|ejecut* corr*|ausfuhr* lauf*|execut* lanc*|execut* rod*|esegu*|выполн* запуст*|运行 执行 跑|実行 走ら|실행 돌려
set configure|configur* establec* pon*|setz* einstell* konfigur*|defin* configur* regl*|defin* configur*|impost* configur*|установ* настро*|设置 配置 设定|設定 構成|설정 구성
enable|activ* habilit*|aktivier*|activ*|ativ* habilit*|attiv* abilit*|включ* актив*|启用 开启|有効|활성화 켜
disable|desactiv* deshabilit*|deaktivier*|desactiv*|desativ* desabilit*|disattiv* disabilit*|выключ* отключ*|禁用 关闭|無効|비활성화 꺼
cancel|cancel* anul*|abbrech* storn*|annul*|cancel*|annull* cancell*|отмен*|取消|キャンセル 取り消|취소
merge combine|fusion* combin* unir|zusammenf* verein*|fusion* combin*|mescl* fundir* combin*|unisc* unir* fond*|объедин* слить|合并|統合 マージ|병합 합치
assign|asign*|zuweis* zuordn*|attribu* assign*|atribu*|assegn*|назнач*|分配 指派|割り当て 担当|할당 배정
import|import*|importier*|import*|import*|import*|импорт*|导入|インポート 取り込|가져오 임포트
export|export*|exportier*|export*|export*|esport*|экспорт*|导出|エクスポート 書き出|내보내 익스포트
read open|le* abr*|les* offn*|lir* ouvr*|le* abr*|legg* apr*|прочит* чита* откр*|读取 阅读 打开|読み 読む 開い|읽어 열어
write save|escrib* guard*|schreib* speicher*|ecri* enregistr* sauvegard*|escrev* salv* grav*|scriv* salv*|запис* сохран*|写入 保存|書き 保存|쓰기 저장
close|cerr*|schliess*|ferm*|fech*|chiud*|закр*|关闭|閉じ|닫아 종료
pause|paus*|pausier* anhalt*|paus*|paus*|paus*|пауз* приостанов*|暂停|一時停止 止めて|일시정지 멈춰
resume continue|reanud* continu*|fortsetz*|repren* continu*|retom* continu*|riprend* continu*|возобнов* продолж*|恢复 继续|再開 続け|재개 계속
play|reproduc* pon*|abspiel* spiel*|jou* lir*|toc* reproduz*|riprodu* suon*|воспроизв* включ* игра*|播放|再生 流し|재생 틀어
attach connect|adjunt* conect* vincul*|anhang* verbind*|attach* connect* joindr*|anex* conect* lig*|colleg* connett* allega*|подключ* прикреп* присоедин*|挂载 连接 附加|接続 アタッチ 添付|연결 첨부
detach disconnect|desconect* desvincul*|trenn* abhang*|detach* deconnect*|desconect* deslig*|scolleg* disconnett*|отключ* открепи*|卸载 断开 分离|切断 デタッチ 外し|분리 해제
resize increase extend|aument* ampli* redimension*|vergrosser* erhoh* erweiter*|augment* agrand* redimension*|aument* ampli* redimension*|aument* ingrand* ridimension*|увелич* расшир*|扩容 增加 扩大 调整|拡張 増やし 増加 サイズ|늘려 확장 증가
reduce decrease|reduc* dismin* baj*|verringer* reduzier* senk*|redui* diminu* baiss*|reduz* diminu* baix*|riduc* ridurr* dimin* abbass*|уменьш* сниз* сократ*|减少 降低 缩小 调低|減らし 下げ 縮小|줄여 감소 낮춰
restore recover|restaur* recuper*|wiederherstell*|restaur* recuper*|restaur* recuper*|ripristin* recuper*|восстанов*|恢复 还原|復元 リストア 戻し|복원 복구
backup|copia* respald* backup*|sicher* backup*|sauvegard* backup*|backup* copia*|backup* copia*|резерв* бэкап*|备份|バックアップ|백업
schedule plan|program* agend* planific*|plan* zeitplan*|planifi* program*|agend* program*|pianific* program*|запланир* расписан*|计划 安排 定时|スケジュール 予定 予約|예약 일정 스케줄
reply answer respond|respond* contest*|antwort* beantwort*|repond*|respond*|rispond*|ответ*|回复 答复|返信 回答 返事|답장 답변 회신
transfer forward|transfer* reenvi*|weiterleit* ubertrag*|transfer* transmet*|transfer* encaminh*|trasfer* inoltr*|перевед* переда* переслат*|转移 转给 转发 转接|転送 移管|전환 넘겨 전달 이관
generate|gener*|generier* erzeug*|gener*|ger* gera*|gener*|сгенер* создат*|生成|生成 作成|만들어 생성
convert|convert* convier*|konvertier* umwandl*|convert*|convert*|convert*|конверт* преобраз*|转换 转成|変換|변환
share|compart*|teil*|partag*|compartilh* partilh*|condivid*|поделит*|分享 共享|共有|공유
rename|renombr*|umbenenn*|renomm*|renome*|rinomin*|переимен*|重命名 改名|名前を変更 リネーム|이름 변경
archive|archiv*|archivier*|archiv*|arquiv*|archivi*|архив*|归档 存档|アーカイブ|보관 아카이브
count|cuant* cont*|wie viel* anzahl zahl*|combien compt*|quant* cont*|quant* cont*|сколько подсчит*|多少 几个 统计|いくつ 何件 数|몇 개수 얼마
file|archivo* fichero*|datei*|fichier*|arquivo* ficheiro*|file|файл*|文件|ファイル|파일
folder directory|carpet* directori*|ordner* verzeichnis*|dossier* repertoir*|past* diretori*|cartell* directory|папк* каталог* директор*|文件夹 目录|フォルダ ディレクトリ|폴더 디렉터리
user account|usuari* cuent*|benutzer* konto*|utilisateur* compte*|usuari* cont*|utent* account|пользоват* аккаунт* учетн*|用户 账号 账户|ユーザー アカウント|사용자 계정
group team|grup* equip*|grupp* team*|group* equip*|grup* equip*|grupp* squadr*|групп* команд*|组 团队|グループ チーム|그룹 팀
role permission|rol* permis*|roll* berechtig*|rol* permission*|papel* permiss*|ruol* permess*|рол* прав* разреш*|角色 权限|ロール 権限|역할 권한
password|contrasen* clave|passwort* kennwort*|passe|senha*|password|парол*|密码|パスワード|비밀번호 암호
key|clave* llave*|schlussel*|cle cles|chave*|chiav*|ключ*|密钥 钥匙|キー 鍵|키
secret|secret*|geheimnis*|secret*|segred*|segret*|секрет*|机密 密钥|シークレット 秘密|시크릿 비밀
certificate|certificad*|zertifikat*|certificat*|certificad*|certificat*|сертификат*|证书|証明書|인증서
server instance machine|servidor* instanci* maquin*|server* instanz* maschin* rechner*|serveur* instanc* machin*|servidor* instanci* maquin*|server* istanz* macchin*|сервер* инстанс* машин*|服务器 实例 虚拟机 机器|サーバー インスタンス マシン 仮想マシン|서버 인스턴스 머신 가상 머신
disk volume storage|disco* volum* almacenamient*|festplatt* platte* volum* speicher*|disqu* volum* stockag*|disco* volum* armazenament*|disco* volum* archiviazion*|диск* том* хранилищ*|磁盘 硬盘 存储 卷|ディスク ボリューム ストレージ|디스크 볼륨 스토리지 저장소
snapshot|instantane* snapshot*|snapshot* momentaufnahm*|instantane* snapshot*|snapshot* instantane*|snapshot* istantane*|снимок снимк* снапшот*|快照|スナップショット|스냅샷
image|imagen* imagenes|abbild* image*|image*|imagem imagens|immagin*|образ*|镜像 映像|イメージ|이미지
database|datos|datenbank*|donnees|dados|database|баз* данных бд|数据库|データベース|데이터베이스 DB
table|tabl*|tabell*|tabl*|tabel*|tabell*|таблиц*|表 表格|テーブル 表|테이블 표
network|red redes|netzwerk* netz|reseau*|rede redes|rete reti|сет* сеть|网络|ネットワーク|네트워크 망
rule|regl*|regel*|regl*|regr*|regol*|правил*|规则|ルール 規則|규칙 룰
address|direcci*|adress*|adress*|endereco*|indirizz*|адрес*|地址|アドレス 住所|주소
zone region|zon* region*|zon* region*|zon* region*|zon* regi*|zon* region*|зон* регион*|区域 地区|ゾーン リージョン 地域|영역 존 리전 지역
record entry|registr* entrad*|eintrag* datensatz*|enregistr* entre*|registr* entrad*|record registr*|запис*|记录 条目|レコード 記録|레코드 기록
queue|cola colas|warteschlang*|fil* queue*|fila filas|cod* queue|очеред*|队列|キュー|큐 대기열
message|mensaj*|nachricht*|messag*|mensag*|messagg*|сообщен*|消息 信息|メッセージ|메시지
email mail|correo* email*|mail* e-mail*|courriel* mail* e-mail*|email* e-mail* correio*|email* posta|почт* письм* имейл*|邮件 电子邮件|メール|이메일 메일
log|registro* log*|protokoll* log*|journal* log*|registro* log*|log registr*|лог* журнал*|日志|ログ|로그
alert alarm notification|alert* alarm* notificac*|alarm* warnung* benachrichtig*|alert* alarm* notificat*|alert* alarm* notificac*|allarm* avvis* notific*|оповещен* тревог* уведомлен* алерт*|告警 警报 报警 通知|アラーム アラート 通知|알람 경보 알림
metric|metric*|metrik* kennzahl*|metriqu*|metric*|metric*|метрик*|指标|メトリクス 指標|메트릭 지표
cost spending charges|cost* gast*|kost* ausgab*|cout* depens* frais|cust* gast*|cost* spes*|стоимост* расход* затрат* потрат*|费用 成本 花费 花了|コスト 費用 料金|비용 요금 지출
invoice bill|factur*|rechnung*|factur*|fatur*|fattur*|счет* счёт* инвойс*|发票 账单|請求書 インボイス|청구서 인보이스 송장
payment|pag*|zahlung*|paiement* pai*|pagament*|pagament*|платеж* оплат*|付款 支付|支払い 決済|결제 지불
price|preci*|preis*|prix|preco*|prezz*|цен*|价格|価格 値段|가격
customer client|client* cliente*|kund*|client*|client*|client*|клиент* заказчик*|客户 顾客|顧客 お客|고객 클라이언트
contact|contact*|kontakt*|contact*|contat*|contatt*|контакт*|联系人|連絡先 コンタクト|연락처
company organization|empres* compani* organizac*|firm* unternehm* organisation*|entrepris* societ* organisation*|empres* companhi* organizac*|aziend* societ* organizzazion*|компани* организац*|公司 组织 企业|会社 企業 組織|회사 기업 조직
task|tare*|aufgab*|tach*|tarefa*|compit* attivit*|задач*|任务|タスク|작업 태스크 할일
note|not* nota*|notiz*|not*|nota* anotac*|not* appunt*|заметк* примечан*|笔记 备注|メモ ノート|메모 노트
meeting|reunion* junt*|besprechung* termin* meeting*|reunion*|reuni*|riunion* incontr*|встреч* совещан*|会议|会議 ミーティング|회의 미팅
call|llamad*|anruf*|appel*|chamad* ligac*|chiamat*|звон* звонок|电话 通话|電話 通話|전화 통화
product|product*|produkt*|produit*|produt*|prodott*|продукт* товар*|产品 商品|製品 商品|제품 상품
order|pedid* orden*|bestellung* auftrag*|command*|pedid* encomend*|ordin*|заказ*|订单|注文|주문
report|inform* report*|bericht* report*|rapport*|relatori*|rapport* report*|отчет* отчёт*|报告 报表|レポート 報告|보고서 리포트
sales revenue|vent* ingres*|umsatz* verkauf*|vent*|vend* receit*|vendit* ricav* fatturat*|продаж* выручк*|销售 营收|売上 販売|매출 판매
ticket case|tiquet* ticket* caso*|ticket* fall|ticket* dossier|ticket* chamado*|ticket*|тикет* заявк* обращен*|工单 票据|チケット 問い合わせ|티켓 문의
comment|comentari*|kommentar*|commentair*|comentari*|comment*|комментар*|评论 评语|コメント|댓글 코멘트
article|articul*|artikel*|articl*|artig*|articol*|стать*|文章|記事|기사 문서
chat conversation|chat* conversac*|chat* gesprach* unterhaltung*|chat* conversation* discussion*|chat* conversa*|chat* conversazion*|чат* разговор* беседа*|聊天 对话 会话|チャット 会話|채팅 대화
agent|agent*|agent* mitarbeiter* bearbeiter*|agent* conseiller*|agent* atendent*|agent* operator*|агент* оператор* сотрудник*|客服 坐席 代理|担当者 エージェント オペレーター|상담원 담당자 에이전트
song track music|cancion* musica* pista*|lied* song* musik* titel*|chanson* musiqu* morceau*|musica* cancao* faixa*|canzon* music* brano*|песн* музык* трек*|歌 歌曲 音乐 曲子|曲 音楽 歌|노래 음악 곡
playlist|playlist*|playlist* wiedergabelist*|playlist*|playlist*|playlist*|плейлист*|歌单 播放列表|プレイリスト|플레이리스트 재생목록
album|album*|album*|album*|album*|album*|альбом*|专辑|アルバム|앨범
artist|artist*|kunstler*|artist*|artist*|artist*|артист* исполнител*|艺术家 歌手|アーティスト 歌手|아티스트 가수
video|video* videos|video*|video*|video*|video*|видео|视频|動画 ビデオ|동영상 비디오 영상
episode podcast|episodi* podcast*|episod* folge* podcast*|episod* podcast*|episodi* podcast*|episodi* puntat* podcast*|эпизод* выпуск* подкаст*|剧集 播客 一集|エピソード ポッドキャスト|에피소드 팟캐스트
branch|ram* branch*|zweig* branch*|branch* branche*|ram* branch*|ram* branch*|ветк*|分支|ブランチ|브랜치 분기
commit|commit* confirm*|commit*|commit*|commit*|commit*|коммит*|提交|コミット|커밋
difference diff|diferenci*|unterschied* diff*|differenc*|diferenc*|differenz*|разниц* различ* дифф*|差异 区别 不同|差分 違い|차이 비교
test|prueb* test*|test*|test*|test* teste*|test* prov*|тест*|测试|テスト|테스트
package dependency|paquet* dependenci*|paket* abhangigkeit*|paquet* dependanc*|pacot* dependenc*|pacchett* dipendenz*|пакет* зависимост*|包 依赖|パッケージ 依存|패키지 의존성
process|proces*|prozess*|processus|process*|process*|процесс*|进程|プロセス|프로세스
version|version*|version*|version*|vers*|version* versio*|верси*|版本|バージョン|버전
label tag|etiquet*|label* etikett* tag*|etiquet* libell*|etiquet* rotul*|etichett*|метк* тег*|标签|ラベル タグ|라벨 태그
project|proyect*|projekt*|projet*|projet*|progett*|проект*|项目|プロジェクト|프로젝트
policy|politic* poliz*|richtlini* polic*|politiqu* strateg*|politic*|politic* criteri*|политик*|策略 政策|ポリシー|정책
old|antigu* viej*|alt alte* alten|ancien* vieux vieill*|antig* velh*|vecchi*|стар*|旧 老的 过期|古い|오래된 옛
month|mes|monat*|mois|mes|mese|месяц*|月|月|월 달
week|seman*|woch*|semain*|seman*|settiman*|недел*|周 星期|週|주
year|ano anos|jahr*|an annee*|ano anos|anno anni|год* лет|年|年|년 연도
"""

_SYNONYMS = (
    ("list", "show", "view", "browse", "enumerate", "display"),
    ("get", "fetch", "read", "retrieve", "show", "view", "open", "look", "check", "inspect", "see", "display"),
    ("create", "add", "make", "new", "start", "open", "provision", "spin", "launch", "set up"),
    ("update", "change", "edit", "modify", "rename", "set", "adjust", "tweak", "alter"),
    ("delete", "remove", "erase", "drop", "destroy", "purge", "wipe", "get rid", "kill", "trash", "nuke", "discard"),
    ("search", "find", "lookup", "query", "locate", "look"),
    ("send", "post", "message", "notify", "mail", "email", "ping"),
    ("cancel", "stop", "abort", "void", "halt", "terminate", "kill"),
    ("invite", "add"),
    ("restart", "reboot", "cycle", "reset"),
    ("start", "boot", "launch", "run", "resume", "power"),
    ("copy", "duplicate", "clone", "replicate"),
    ("move", "transfer", "relocate", "migrate", "shift", "hand"),
    ("download", "export", "save", "pull", "fetch", "grab"),
    ("upload", "import", "push", "publish"),
    ("increase", "grow", "resize", "extend", "expand", "enlarge", "bigger", "bump", "raise", "scale"),
    ("decrease", "shrink", "reduce", "lower", "smaller", "cut"),
    ("mute", "silence", "quiet", "snooze", "suppress"),
    ("merge", "combine", "join", "consolidate", "dedupe"),
    ("assign", "allocate", "give", "hand", "route", "delegate"),
    ("schedule", "plan", "book", "queue", "later"),
    ("revoke", "disable", "deactivate", "block", "ban", "suspend"),
    ("enable", "activate", "turn", "switch", "unblock"),
    ("restore", "recover", "rollback", "revert", "undo", "back"),
    ("cost", "spend", "spending", "bill", "charge", "price", "money", "budget"),
    ("error", "failure", "fail", "broken", "crash", "bug", "issue", "problem"),
    ("user", "person", "people", "member", "account", "someone", "employee"),
    ("customer", "client", "buyer", "account"),
    ("server", "machine", "instance", "host", "box", "vm", "node"),
    ("disk", "volume", "drive", "storage"),
    ("file", "document", "doc"),
    ("song", "track", "tune", "music"),
    ("reply", "respond", "answer", "response"),
    ("log", "record", "journal", "history", "trail"),
    ("secret", "password", "credential", "token", "key"),
    ("alert", "alarm", "notification", "warning", "page"),
)


def _cells(row: str) -> list[list[str]]:
    return [cell.split() for cell in row.split("|")]


@functools.lru_cache(maxsize=1)
def _tables() -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """(exact word -> English stems, stem prefix -> English stems, CJK piece -> English stems)."""
    exact: dict[str, tuple[str, ...]] = {}
    prefixes: dict[str, tuple[str, ...]] = {}
    pieces: dict[str, tuple[str, ...]] = {}
    for row in _TABLE.strip().splitlines():
        cells = _cells(row)
        english = tuple(dict.fromkeys(stem(w) for w in cells[0]))
        for cell in cells[1 : _LANGUAGES + 1]:
            for entry in cell:
                word = fold(entry)
                table = pieces if is_cjk(word) or _is_hangul(word) else (prefixes if word.endswith("*") else exact)
                key = word.rstrip("*")
                table[key] = tuple(dict.fromkeys((*table.get(key, ()), *english)))
    return exact, prefixes, pieces


def _is_hangul(word: str) -> bool:
    return any("\uac00" <= c <= "\ud7af" for c in word)


def _piece_matches(run: str, pieces: dict[str, tuple[str, ...]]) -> list[str]:
    found: list[str] = []
    for start in range(len(run)):
        for size in range(min(6, len(run) - start), 0, -1):
            hit = pieces.get(run[start : start + size])
            if hit:
                found.extend(hit)
                break
    return found


@functools.lru_cache(maxsize=1 << 12)
def _word_translations(word: str) -> tuple[str, ...]:
    exact, prefixes, pieces = _tables()
    if word in exact:
        return exact[word]
    if is_cjk(word) or _is_hangul(word):
        return tuple(dict.fromkeys(_piece_matches(word, pieces)))
    for size in range(len(word), 3, -1):
        hit = prefixes.get(word[:size])
        if hit:
            return hit
    return ()


def translations(tokens: list[str]) -> list[str]:
    """English stems for the words of other languages among `tokens` (folded words, or
    whole runs of CJK/Hangul text), in order, each once."""
    found: dict[str, None] = {}
    for token in tokens:
        if token.isascii() and len(token) < 3:
            continue
        found.update(dict.fromkeys(_word_translations(token)))
    return list(found)


@functools.lru_cache(maxsize=1)
def _synonym_index() -> dict[str, frozenset[str]]:
    index: dict[str, set[str]] = {}
    for group in _SYNONYMS:
        stems = {stem(w) for w in group if " " not in w}
        for member in stems:
            index.setdefault(member, set()).update(stems - {member})
    return {k: frozenset(v) for k, v in index.items()}


def english_synonyms(term: str) -> frozenset[str]:
    """Stems of English words used for the same action or thing as `term`."""
    return _synonym_index().get(term, frozenset())
