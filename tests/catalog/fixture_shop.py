"""A commerce platform's API as one MCP server: 425 tools, about 1.2 MB of tool JSON.

Written for these tests. Each resource has a plain sentence saying what it is, the actions
it supports and its own fields; every tool is built from those, with the long shared
parameter descriptions real API servers carry (pagination, expansion, idempotency,
metadata). A pure function of nothing: the same bytes every time.
"""

from __future__ import annotations

from typing import Any

Tool = dict[str, Any]
TOOL_COUNT = 425

# (plural, singular, what it is, actions beyond list/retrieve, fields)
Resource = tuple[str, str, str, tuple[str, ...], tuple[str, ...]]
_CRUD = ("create", "update", "delete")
RESOURCES: tuple[Resource, ...] = (
    ("payments", "payment", "A payment is one charge of a customer's payment method for a product, plan or invoice.",
     ("create", "capture", "refund", "void", "retry", "update", "search"), ("amount", "currency", "customer_id", "payment_method_id", "status", "description", "statement_descriptor")),
    ("payment_methods", "payment_method", "A payment method is a card, bank account or wallet a customer saved for later charges.",
     ("create", "update", "delete", "set_default"), ("customer_id", "kind", "last4", "expires_month", "expires_year", "billing_address")),
    ("refunds", "refund", "A refund returns all or part of a captured payment to the customer's payment method.",
     ("create", "cancel", "update"), ("payment_id", "amount", "reason", "status")),
    ("disputes", "dispute", "A dispute (chargeback) is a customer's bank contesting a payment; evidence can be sent before the deadline.",
     ("submit_evidence", "accept", "update"), ("payment_id", "amount", "reason", "status", "evidence_due_by", "evidence")),
    ("payouts", "payout", "A payout moves the company's available balance to its bank account.",
     ("create", "cancel", "update"), ("amount", "currency", "destination", "arrival_date", "status")),
    ("transfers", "transfer", "A transfer moves funds between the company's balance and a connected account, such as an affiliate's.",
     ("create", "reverse", "update"), ("amount", "currency", "destination_account", "source_payment_id")),
    ("balance_transactions", "balance_transaction", "A balance transaction is one movement of the company balance: a charge, fee, refund, payout or adjustment.",
     (), ("amount", "fee", "net", "kind", "source_id", "available_on")),
    ("invoices", "invoice", "An invoice bills a customer for items and is paid by card, bank transfer or balance.",
     ("create", "update", "delete", "finalize", "send", "pay", "void", "mark_uncollectible", "search"), ("customer_id", "due_date", "items", "currency", "status", "footer", "collection_method")),
    ("invoice_items", "invoice_item", "An invoice item is one line on a draft invoice: a product, a quantity and a price.",
     _CRUD, ("invoice_id", "product_id", "quantity", "unit_amount", "description")),
    ("memberships", "membership", "A membership is a customer's subscription to a plan, giving access to products while it is active.",
     ("cancel", "pause", "resume", "update", "terminate", "change_plan", "extend_trial"), ("customer_id", "plan_id", "status", "renewal_date", "cancel_at_period_end", "trial_end")),
    ("plans", "plan", "A plan is how a product is sold: a price, a billing interval and an optional trial.",
     ("create", "update", "delete", "archive", "duplicate"), ("product_id", "price", "currency", "interval", "trial_days", "visibility", "stock")),
    ("products", "product", "A product is something the company sells: a community, course, software licence or digital download.",
     ("create", "update", "delete", "archive", "duplicate", "publish", "unpublish"), ("name", "description", "visibility", "category", "headline", "route")),
    ("prices", "price", "A price is an amount and currency for a plan in one market, for selling in several currencies.",
     _CRUD, ("plan_id", "amount", "currency", "market")),
    ("coupons", "coupon", "A coupon is a discount, as a percentage or an amount off, that customers apply at checkout.",
     ("create", "update", "delete", "expire"), ("code", "percent_off", "amount_off", "duration", "max_redemptions", "expires_at", "plan_ids")),
    ("promo_campaigns", "promo_campaign", "A promo campaign sends a discount code to a segment of customers by email and tracks redemptions.",
     ("create", "update", "delete", "launch", "pause"), ("name", "coupon_id", "segment", "starts_at", "ends_at")),
    ("customers", "customer", "A customer is a person or business that buys from the company, with their contact details and saved payment methods.",
     ("create", "update", "delete", "merge", "search", "ban", "unban"), ("email", "name", "phone", "country", "tax_id", "notes")),
    ("companies", "company", "A company is a seller account: its profile, payout settings and team.",
     ("update",), ("name", "support_email", "country", "logo_url", "payout_schedule")),
    ("team_members", "team_member", "A team member is a person who helps run the company, with a role that limits what they can do.",
     ("create", "update", "delete", "invite"), ("email", "role", "name")),
    ("api_keys", "api_key", "An API key lets a program act for the company with chosen permissions; a revoked key stops working at once.",
     ("create", "revoke", "rotate"), ("name", "permissions", "expires_at")),
    ("experiences", "experience", "An experience is a space inside a product, such as a chat, forum, course or app, that members reach through it.",
     ("create", "update", "delete", "attach", "detach"), ("product_id", "app_id", "name", "position")),
    ("courses", "course", "A course is a sequence of chapters and lessons that members work through, with progress tracking.",
     ("create", "update", "delete", "publish"), ("experience_id", "title", "description", "cover_image_url", "drip_days")),
    ("course_chapters", "course_chapter", "A course chapter groups lessons inside a course.",
     ("create", "update", "delete", "reorder"), ("course_id", "title", "position")),
    ("course_lessons", "course_lesson", "A course lesson is one video, text page, quiz or download inside a chapter.",
     ("create", "update", "delete", "reorder", "publish"), ("chapter_id", "title", "kind", "content", "video_url", "position")),
    ("lesson_progress", "lesson_progress", "Lesson progress records which lessons a member has started and finished, and quiz scores.",
     ("reset",), ("member_id", "lesson_id", "completed", "score")),
    ("forums", "forum", "A forum is a place where members start posts and comment, inside an experience.",
     ("create", "update", "delete"), ("experience_id", "name", "who_can_post")),
    ("forum_posts", "forum_post", "A forum post is a topic someone started in a forum, with a title, text and attachments.",
     ("create", "update", "delete", "pin", "unpin", "lock"), ("forum_id", "title", "content", "author_id", "pinned")),
    ("forum_comments", "forum_comment", "A forum comment is a reply under a forum post.",
     _CRUD, ("post_id", "content", "author_id", "parent_id")),
    ("chat_channels", "chat_channel", "A chat channel is a live conversation space inside an experience.",
     ("create", "update", "delete", "archive"), ("experience_id", "name", "who_can_post", "slow_mode_seconds")),
    ("chat_messages", "chat_message", "A chat message is one message in a chat channel.",
     ("create", "update", "delete", "pin"), ("channel_id", "content", "author_id", "reply_to_id")),
    ("direct_messages", "direct_message", "A direct message is a private message between the company and one member.",
     ("create", "delete"), ("member_id", "content")),
    ("notifications", "notification", "A notification is a push or email alert sent to members about new content or events.",
     ("create", "cancel"), ("title", "content", "audience", "send_at", "channel")),
    ("members", "member", "A member is a customer with access to at least one product, seen from the community side.",
     ("update", "ban", "unban", "search"), ("customer_id", "username", "roles", "joined_at")),
    ("reviews", "review", "A review is a member's star rating and comment on a product; the company can reply or hide it.",
     ("reply", "hide", "unhide"), ("product_id", "stars", "content", "author_id")),
    ("affiliates", "affiliate", "An affiliate is a person paid a commission for sales they refer.",
     ("create", "update", "delete", "approve"), ("email", "commission_percent", "status", "payout_method")),
    ("referral_links", "referral_link", "A referral link is an affiliate's tracked link to a product.",
     ("create", "delete"), ("affiliate_id", "product_id", "slug", "clicks")),
    ("commissions", "commission", "A commission is what an affiliate earned from one referred payment.",
     ("approve", "reject"), ("affiliate_id", "payment_id", "amount", "status")),
    ("webhooks", "webhook", "A webhook endpoint receives event notifications (payment succeeded, membership cancelled) at a URL the company runs.",
     ("create", "update", "delete", "test", "rotate_secret"), ("url", "events", "enabled", "api_version")),
    ("webhook_deliveries", "webhook_delivery", "A webhook delivery is one attempt to send an event to a webhook endpoint, with the response.",
     ("redeliver",), ("webhook_id", "event_id", "status_code", "attempt")),
    ("events", "event", "An event records something that happened in the account, such as a payment or a cancelled membership.",
     (), ("kind", "object_id", "occurred_at")),
    ("apps", "app", "An app is a third-party integration a company installs into its products.",
     ("create", "update", "delete", "install", "uninstall"), ("name", "base_url", "icon_url", "permissions")),
    ("app_builds", "app_build", "An app build is one uploaded version of an app's bundle, to review and promote.",
     ("create", "promote", "delete"), ("app_id", "version", "status")),
    ("checkout_sessions", "checkout_session", "A checkout session is a hosted payment page for one purchase; it expires after 24 hours.",
     ("create", "expire"), ("plan_id", "success_url", "cancel_url", "customer_email", "coupon_code")),
    ("shipments", "shipment", "A shipment sends a physical product to a customer, with a carrier and tracking number.",
     ("create", "update", "cancel", "mark_delivered"), ("order_id", "carrier", "tracking_number", "address", "status")),
    ("orders", "order", "An order is a purchase of physical goods that needs fulfilment.",
     ("update", "cancel", "fulfill"), ("customer_id", "items", "shipping_address", "status")),
    ("tax_rates", "tax_rate", "A tax rate is a percentage applied to sales in one region, such as VAT or sales tax.",
     ("create", "update", "archive"), ("percentage", "country", "state", "inclusive", "display_name")),
    ("files", "file", "A file is an uploaded image, video or document used in products, lessons or messages.",
     ("upload", "delete"), ("name", "content_type", "size", "purpose")),
    ("access_passes", "access_pass", "An access pass gives a person free access to a product for a while, without a payment.",
     ("create", "revoke"), ("product_id", "email", "expires_at")),
    ("waitlist_entries", "waitlist_entry", "A waitlist entry is a person waiting to be let into a product with limited places.",
     ("approve", "reject"), ("product_id", "email", "answers", "status")),
    ("leads", "lead", "A lead is a person who showed interest (a sign-up form, a free download) but has not bought yet.",
     ("create", "update", "delete", "convert"), ("email", "name", "source", "tags")),
    ("support_tickets", "support_ticket", "A support ticket is a customer's request for help, with its conversation.",
     ("create", "update", "close", "reopen", "reply", "assign"), ("customer_id", "subject", "status", "priority", "assignee_id")),
    ("analytics_reports", "analytics_report", "An analytics report summarises revenue, churn, sign-ups or traffic over a period.",
     ("create", "export"), ("kind", "period_start", "period_end", "granularity")),
    ("authorized_users", "authorized_user", "An authorized user can act in the company's dashboard on behalf of its owner.",
     ("create", "delete"), ("email", "role")),
    ("bounties", "bounty", "A bounty is a paid task members can claim and complete for a reward.",
     ("create", "update", "delete", "award"), ("title", "reward_amount", "currency", "deadline", "status")),
    ("giveaways", "giveaway", "A giveaway picks random winners among members who entered.",
     ("create", "draw", "cancel"), ("title", "prize", "ends_at", "winner_count")),
    ("polls", "poll", "A poll asks members a question in a chat or forum and counts the votes.",
     ("create", "close", "delete"), ("question", "options", "experience_id", "closes_at")),
    ("events_calendar", "calendar_event", "A calendar event is a scheduled live session, such as a call or stream, shown to members.",
     ("create", "update", "delete", "cancel"), ("title", "starts_at", "ends_at", "experience_id", "join_url")),
    ("credit_grants", "credit_grant", "A credit grant adds store credit to a customer's balance, spent before their payment method.",
     ("create", "void"), ("customer_id", "amount", "currency", "expires_at", "reason")),
    ("usage_records", "usage_record", "A usage record reports metered usage for a membership billed by use.",
     ("create",), ("membership_id", "quantity", "occurred_at", "action")),
    ("licence_keys", "licence_key", "A licence key unlocks a software product on a customer's machines.",
     ("create", "revoke", "reset_activations"), ("product_id", "customer_id", "max_activations", "status")),
    ("domains", "domain", "A domain is a custom web address for the company's store pages.",
     ("create", "verify", "delete"), ("hostname", "status", "dns_records")),
    ("segments", "segment", "A segment is a saved group of customers or members chosen by rules, used for campaigns and reports.",
     ("create", "update", "delete", "refresh"), ("name", "rules", "member_count")),
    ("email_campaigns", "email_campaign", "An email campaign is a newsletter or announcement sent to a segment, with open and click tracking.",
     ("create", "update", "delete", "send", "schedule", "cancel"), ("subject", "content", "segment_id", "send_at", "status")),
    ("email_templates", "email_template", "An email template is reusable layout and text for receipts, reminders and campaigns.",
     ("create", "update", "delete", "preview"), ("name", "subject", "content", "kind")),
    ("automations", "automation", "An automation runs steps, such as sending an email or granting access, when an event happens.",
     ("create", "update", "delete", "enable", "disable"), ("name", "event_kind", "steps", "enabled")),
    ("storefront_pages", "storefront_page", "A storefront page is a public page of the company's store: a home page, a product page or a custom page.",
     ("create", "update", "delete", "publish", "unpublish"), ("title", "route", "content", "seo_title", "seo_description")),
    ("bundles", "bundle", "A bundle sells several products together at one price.",
     ("create", "update", "delete", "archive"), ("name", "product_ids", "price", "currency")),
    ("upsells", "upsell", "An upsell offers a customer a second product right after checkout, at a special price.",
     ("create", "update", "delete"), ("plan_id", "offer_plan_id", "discount_percent", "headline")),
    ("gift_cards", "gift_card", "A gift card is a prepaid code a customer buys for someone else to spend in the store.",
     ("create", "update", "disable", "reload"), ("code", "balance", "currency", "recipient_email", "expires_at")),
    ("withdrawals", "withdrawal", "A withdrawal takes money out of a creator's platform wallet to their bank or card.",
     ("create", "cancel"), ("amount", "currency", "destination", "status", "fee")),
    ("verifications", "verification", "A verification checks the identity of a company's owner before payouts are enabled (know your customer).",
     ("create", "submit", "cancel"), ("owner_name", "country", "document_kind", "status")),
    ("tax_forms", "tax_form", "A tax form is a yearly earnings statement prepared for a seller or affiliate, such as a 1099.",
     ("create", "void"), ("year", "recipient_id", "kind", "status")),
    ("ledger_accounts", "ledger_account", "A ledger account holds a balance in one currency for the company or one of its connected accounts.",
     ("create", "update", "freeze", "unfreeze"), ("currency", "owner_id", "balance", "kind")),
    ("exchange_rates", "exchange_rate", "An exchange rate converts between the company's currency and a customer's, refreshed hourly.",
     (), ("from_currency", "to_currency", "rate", "as_of")),
    ("quests", "quest", "A quest is a series of tasks members complete to earn badges or rewards.",
     ("create", "update", "delete", "complete"), ("title", "steps", "reward", "experience_id")),
    ("badges", "badge", "A badge is a mark shown on a member's profile for an achievement or role.",
     ("create", "update", "delete", "award", "revoke"), ("name", "icon_url", "criteria")),
    ("livestreams", "livestream", "A livestream is a live video broadcast to members, recorded for later viewing.",
     ("create", "update", "start", "end", "delete"), ("title", "experience_id", "scheduled_at", "recording_url", "status")),
    ("recordings", "recording", "A recording is a saved video of a past livestream or call.",
     ("update", "delete", "publish"), ("livestream_id", "title", "duration_seconds", "visibility")),
)
_SHARED = {
    "company_id": {"type": "string", "description": (
        "The id of the company (seller account) the request acts for, beginning with 'biz_'. API keys that belong "
        "to one company may leave it out; keys of an app installed in several companies must give it on every "
        "request, or the request is refused with a 400 naming this parameter.")},
    "expand": {"type": "array", "items": {"type": "string"}, "description": (
        "Names of related objects to include in full instead of as ids, for example ['customer', 'plan']. Each "
        "expansion costs one more lookup; expanding more than four levels deep is refused. Unknown names are "
        "ignored rather than rejected, so check the spelling if a field stays an id.")},
    "idempotency_key": {"type": "string", "description": (
        "A unique key of your choosing (a UUID works) that makes retries safe: a second request with the same key "
        "within 24 hours returns the first request's result instead of acting twice. Reusing a key with different "
        "parameters is an error.")},
    "test_mode": {"type": "boolean", "description": (
        "Act on test data instead of live data. Test objects never move real money and are invisible to live "
        "requests; an API key made for test mode can only act on test data whatever this says. Defaults to the "
        "mode of the key. Useful for trying a request before running it for real.")},
    "metadata": {"type": "object", "additionalProperties": {"type": "string"}, "description": (
        "Up to 50 key-value pairs of your own to store on the object, for example an id from your own system. "
        "Keys are at most 40 characters and values at most 500. Set a key to an empty string to remove it; "
        "metadata is never shown to customers.")},
}
_PAGING = {
    "first": {"type": "integer", "minimum": 1, "maximum": 100, "description": (
        "How many objects to return, from 1 to 100; defaults to 10. Lists are ordered by creation time, newest "
        "first, unless order says otherwise.")},
    "after": {"type": "string", "description": (
        "A cursor from the previous page's page_info.end_cursor. Returns the objects after it. Cursors expire "
        "after an hour; start again without one if a cursor is refused.")},
    "before": {"type": "string", "description": (
        "A cursor from the previous page's page_info.start_cursor. Returns the objects before it, to walk "
        "backwards through a list.")},
    "created_after": {"type": "string", "description": (
        "Only objects created at or after this moment, as an ISO 8601 timestamp in UTC or a Unix time in seconds.")},
    "created_before": {"type": "string", "description": (
        "Only objects created before this moment, as an ISO 8601 timestamp in UTC or a Unix time in seconds.")},
    "order": {"type": "string", "enum": ["created_at", "updated_at", "amount", "name"], "description": (
        "Which field to order by. Not every field applies to every object; an inapplicable one is an error.")},
    "direction": {"type": "string", "enum": ["asc", "desc"], "description": "Ascending or descending; desc by default."},
}
_VERB_TEXT = {
    "list": "List {plural} of the company, newest first, a page at a time, with optional filters.",
    "retrieve": "Retrieve one {singular} by its id, with every field the caller may see.",
    "create": "Create a {singular} with the given fields and return it with its new id.",
    "update": "Update fields of an existing {singular}; fields left out keep their current value.",
    "delete": "Delete a {singular} for good. Objects that others depend on cannot be deleted; archive them instead.",
    "search": "Search {plural} by words in their names, emails and notes, best matches first.",
}
_FIELD_TYPES = {
    "amount": "integer", "unit_amount": "integer", "amount_off": "integer", "percent_off": "number",
    "quantity": "integer", "size": "integer", "stars": "integer", "position": "integer", "trial_days": "integer",
    "max_redemptions": "integer", "max_activations": "integer", "clicks": "integer", "attempt": "integer",
    "status_code": "integer", "winner_count": "integer", "drip_days": "integer", "slow_mode_seconds": "integer",
    "stock": "integer", "fee": "integer", "net": "integer", "reward_amount": "integer", "expires_month": "integer",
    "expires_year": "integer", "commission_percent": "number", "percentage": "number", "score": "number",
    "enabled": "boolean", "pinned": "boolean", "completed": "boolean", "inclusive": "boolean",
    "cancel_at_period_end": "boolean", "items": "array", "events": "array", "options": "array", "tags": "array",
    "roles": "array", "permissions": "array", "plan_ids": "array", "dns_records": "array", "answers": "object",
    "evidence": "object", "billing_address": "object", "address": "object", "shipping_address": "object",
}


def _words(name: str) -> str:
    return name.replace("_", " ")


def _field(resource: Resource, field: str) -> dict[str, Any]:
    plural, singular, _, _, _ = resource
    kind = _FIELD_TYPES.get(field, "string")
    if field.endswith("_id"):
        text = (f"The id of the {_words(field[:-3])} this {_words(singular)} belongs to or refers to. Ids are "
                "opaque strings; copy them from the list or retrieve tool of that object rather than building them.")
    elif kind == "integer" and "amount" in field or field in ("fee", "net"):
        text = (f"The {_words(field)} of the {_words(singular)}, in the smallest unit of the currency (cents for "
                "USD, yen for JPY), as a whole number. Zero-decimal currencies take the amount as it is.")
    elif field.endswith("_at") or field.endswith("_date") or field.endswith("_by") or field in ("period_start", "period_end", "deadline", "trial_end"):
        text = (f"The {_words(field)} of the {_words(singular)}, as an ISO 8601 timestamp in UTC. Times in the past "
                "are accepted only where the object allows back-dating.")
    elif field == "status":
        text = (f"The state of the {_words(singular)}. Lists can be filtered by it; some changes of state only "
                "happen through the dedicated actions rather than an update.")
    elif field == "currency":
        text = "A three-letter ISO 4217 currency code in lower case, such as usd or eur; defaults to the company's currency."
    else:
        text = (f"The {_words(field)} of the {_words(singular)}, as shown in the dashboard and returned by the API "
                f"for {_words(plural)}.")
    schema: dict[str, Any] = {"type": kind, "description": text}
    if kind == "array":
        schema["items"] = {"type": "string"}
    return schema


def _description(resource: Resource, verb: str) -> str:
    plural, singular, about, _, _ = resource
    lead = _VERB_TEXT.get(verb, "{Verb} a {singular}: the {verb} action on an existing {singular}.").format(
        plural=_words(plural), singular=_words(singular), verb=_words(verb), Verb=_words(verb).capitalize())
    tail = (
        " Requests are authenticated with the company's API key or an app's token, and a token without the "
        f"matching {plural}:{'read' if verb in ('list', 'retrieve', 'search') else 'write'} permission is refused "
        "with a 403 that names the missing permission. Rate limits are per company: about 100 requests in 10 "
        "seconds, after which a 429 says how long to wait. Errors are JSON with a type, a message and, for "
        "invalid parameters, the parameter's name, so a request can be corrected and sent again. Amounts are "
        "integers in the smallest currency unit and times are ISO 8601 in UTC throughout."
    )
    plural, singular = _words(resource[0]), _words(resource[1])
    if verb in ("list", "search"):
        answer = (f" The answer holds nodes, the {plural} of this page, and page_info with has_next_page, "
                  "has_previous_page, start_cursor and end_cursor; pass end_cursor as after to read on.")
    elif verb == "delete":
        answer = f" The answer holds the id of the deleted {singular} and deleted set to true."
    else:
        fields = ", ".join(_words(f) for f in resource[4])
        answer = (f" The answer is the {singular} as stored afterwards: its id, {fields}, created_at, "
                  "updated_at and the metadata you stored on it.")
    return f"{lead} {about}{tail}{answer}"


def _properties(resource: Resource, verb: str) -> tuple[dict[str, Any], list[str]]:
    plural, singular, _, _, fields = resource
    props: dict[str, Any] = {"company_id": _SHARED["company_id"]}
    required: list[str] = []
    if verb == "list":
        props.update(_PAGING)
        props.update({f: _field(resource, f) for f in fields if f.endswith("_id") or f == "status"})
    elif verb == "search":
        props["query"] = {"type": "string", "description": f"Words to look for in {_words(plural)}."}
        props.update({k: _PAGING[k] for k in ("first", "after")})
        required.append("query")
    else:
        if verb != "create":
            props["id"] = {"type": "string", "description": (
                f"The id of the {_words(singular)}, as returned when it was created or by list {_words(plural)}.")}
            required.append("id")
        if verb in ("create", "update"):
            props.update({f: _field(resource, f) for f in fields})
            props["metadata"] = _SHARED["metadata"]
        elif verb not in ("retrieve", "delete"):
            props["reason"] = {"type": "string", "description": (
                f"Why the {_words(singular)} is being changed this way; stored with the object's history and "
                "shown to team members, never to customers.")}
        if verb != "retrieve":
            props["idempotency_key"] = _SHARED["idempotency_key"]
    props["expand"] = _SHARED["expand"]
    props["test_mode"] = _SHARED["test_mode"]
    return props, required


def _tool(resource: Resource, verb: str) -> Tool:
    plural, singular, _, _, _ = resource
    name = f"{verb}_{plural}" if verb in ("list", "search") else f"{verb}_{singular}"
    properties, required = _properties(resource, verb)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return {"name": name, "description": _description(resource, verb), "inputSchema": schema}


def shop_tools() -> list[Tool]:
    """Every resource's list and retrieve, then its actions: 425 tools."""
    tools = [_tool(r, verb) for r in RESOURCES for verb in ("list", "retrieve", *r[3])]
    assert len(tools) == TOOL_COUNT, len(tools)
    return tools
