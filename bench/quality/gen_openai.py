"""Two sessions in OpenAI chat-completions format (`{"model", "messages"}`; assistant
`tool_calls` with JSON-string arguments; `role: tool` results; `usage.prompt_tokens` on each
assistant message):

- a device-control agent on an Android phone: screenshot results carry base64 `data` beside
  `width`/`height`/`format` and the visible UI elements; taps with coordinates, swipes, typed
  text, settings screens. The provider counts the last three screenshots as images (agents
  drop older ones from the request).
- a CJK coding session: Chinese and Japanese requests, answers, file contents and comments.
"""

from __future__ import annotations

import base64
import itertools
import json
import random
import re
from typing import Any

from bench.quality.corpus_common import Clock, PromptMeter, pick


class ChatWriter:
    def __init__(self, rng: random.Random, overhead: int, factor: float, model: str) -> None:
        self.rng = rng
        self.clock = Clock(rng)
        self.meter = PromptMeter(rng, overhead=overhead, factor=factor)
        self.model = model
        self.messages: list[dict[str, Any]] = []
        self.n_call = 0
        self.images: list[int] = []

    def system(self, text: str) -> None:
        self.messages.append({"role": "system", "content": text})
        self.meter.add_text(text)

    def user(self, text: str) -> None:
        self.clock.tick(30, 400)
        self.messages.append({"role": "user", "content": text})
        self.meter.add_text(text)

    def prompt(self) -> int:
        return self.meter.prompt_tokens() + sum(self.images[-3:])

    def assistant(self, text: str | None, calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
        prompt = self.prompt()
        self.clock.tick(1.5, 9)
        msg: dict[str, Any] = {"role": "assistant", "content": text}
        ids = []
        if calls:
            tool_calls = []
            for name, args in calls:
                self.n_call += 1
                cid = f"call_{self.rng.getrandbits(96):024x}"
                ids.append(cid)
                tool_calls.append(
                    {
                        "id": cid,
                        "type": "function",
                        "function": {
                            "name": name,
                            "arguments": json.dumps(args, ensure_ascii=False),
                        },
                    }
                )
            msg["tool_calls"] = tool_calls
        completion = 20 + self.rng.randint(0, 80) + len(text or "") // 3
        msg["usage"] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        self.messages.append(msg)
        self.meter.add_text(
            (text or "") + json.dumps(msg.get("tool_calls", []), ensure_ascii=False)
        )
        return ids

    def tool(self, cid: str, name: str, content: str, image_tokens: int = 0) -> None:
        self.clock.tick(0.3, 4)
        self.messages.append(
            {"role": "tool", "tool_call_id": cid, "name": name, "content": content}
        )
        if image_tokens:
            self.images.append(image_tokens)
            meta = json.loads(content)
            meta.pop("data", None)
            self.meter.add_text(json.dumps(meta, ensure_ascii=False))
        else:
            self.meter.add_text(content)

    def step(self, text: str | None, calls: list[tuple[str, dict[str, Any], str]]) -> None:
        ids = self.assistant(text, [(n, a) for n, a, _ in calls])
        for cid, (name, _a, result) in zip(ids, calls, strict=True):
            self.tool(cid, name, result, image_tokens=1105 if name == "screenshot" else 0)

    def document(self) -> str:
        doc = {"model": self.model, "messages": self.messages}
        return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


# --- device control ---------------------------------------------------------------------------

DEVICE_SYSTEM = (
    "You are PhoneAgent, an assistant that operates an Android 15 phone (Pixel 8, 1080x2400) for "
    "the user. Tools: screenshot() returns the screen as PNG plus the visible UI elements with "
    "their bounds; tap(x, y); long_press(x, y); swipe(x1, y1, x2, y2, duration_ms); "
    "type_text(text); press_key(key: back|home|recents|enter); launch_app(package). Always take "
    "a screenshot after an action to check it worked. Never enter payment details. Ask before "
    "deleting anything."
)

SCREENS: dict[str, list[str]] = {
    "home": ["Phone", "Messages", "Chrome", "Camera", "Play Store", "Settings", "Gmail"],
    "settings": [
        "Network & internet",
        "Connected devices",
        "Apps",
        "Notifications",
        "Battery",
        "Display",
        "Sound & vibration",
        "System",
        "About phone",
    ],
    "display": ["Dark theme", "Brightness level", "Adaptive brightness", "Screen timeout"],
    "screen_timeout": ["15 seconds", "30 seconds", "1 minute", "2 minutes", "5 minutes"],
    "network": ["Internet", "Wi-Fi", "SIMs", "Airplane mode", "Hotspot & tethering"],
    "wifi": ["Office-5G", "Office-Guest", "HOME-7F21", "Add network"],
    "bluetooth": ["Pair new device", "Bluetooth scanning", "Pixel Buds Pro"],
    "sound": ["Ring volume", "Phone ringtone", "Do Not Disturb", "Vibrate for calls"],
    "ringtone": ["Oxygen", "Zen Garden", "Copycat", "Flutterby"],
    "dnd": ["Schedules", "Sleeping", "Event", "Add more", "Start time 22:00", "End time 07:00"],
    "apps": ["See all 87 apps", "Chrome", "Slack", "Default apps", "App storage"],
    "chrome_info": ["Storage & cache", "Clear cache", "Clear storage", "Force stop"],
    "battery": ["Battery usage", "Battery Saver", "Adaptive Battery", "Battery percentage"],
    "battery_usage": ["YouTube 23%", "Screen 18%", "Slack 11%", "Chrome 9%", "Maps 6%"],
    "system": ["Languages", "Keyboard", "Gestures", "Date & time", "Developer options"],
    "keyboard": ["On-screen keyboard", "Gboard", "Languages", "Add keyboard", "Español (ES)"],
    "developer": ["USB debugging", "Show taps", "Pointer location", "Animator duration scale"],
    "about": ["Android version 15", "Build number AP4A.250105.002", "Model Pixel 8"],
    "clock": ["Alarm", "Clock", "Timer", "Add alarm", "6:45 AM", "Mon Tue Wed Thu Fri"],
    "gmail": ["Primary", "Weekly Digest", "Your order has shipped", "Archive", "Search in mail"],
}

DEVICE_TASKS: list[tuple[str, list[str], str]] = [
    ("Turn on dark mode please.", ["settings", "display"], "Dark theme is now on."),
    (
        "Set the screen timeout to 2 minutes, it keeps going dark while I read.",
        ["settings", "display", "screen_timeout"],
        "Screen timeout is 2 minutes now.",
    ),
    (
        "Connect to the Office-5G wifi, password is in my message from IT: Kx7!mT2q.",
        ["settings", "network", "wifi"],
        "Connected to Office-5G.",
    ),
    (
        "Turn off Bluetooth scanning, I read it drains battery.",
        ["settings", "bluetooth"],
        "Bluetooth scanning is off.",
    ),
    (
        "Change my ringtone to Oxygen.",
        ["settings", "sound", "ringtone"],
        "Ringtone set to Oxygen.",
    ),
    (
        "Set Do Not Disturb to run every night from 22:00 to 07:00.",
        ["settings", "sound", "dnd"],
        "DND schedule 'Sleeping' runs 22:00-07:00 every day.",
    ),
    (
        "Which app used the most battery today?",
        ["settings", "battery", "battery_usage"],
        "YouTube used the most (23%), then the screen (18%) and Slack (11%).",
    ),
    (
        "Clear Chrome's cache but not its data.",
        ["settings", "apps", "chrome_info"],
        "Cleared Chrome's cache (312 MB); storage untouched.",
    ),
    (
        "Add a Spanish keyboard to Gboard.",
        ["settings", "system", "keyboard"],
        "Español (ES) added to Gboard.",
    ),
    (
        "Enable developer options and turn on Show taps for my screen recording.",
        ["settings", "about", "system", "developer"],
        "Developer options enabled; Show taps is on.",
    ),
    (
        "Set an alarm for 6:45 on weekdays.",
        ["clock"],
        "Alarm set: 6:45 AM, Mon-Fri.",
    ),
    (
        "Open Gmail and archive the newsletter from Weekly Digest.",
        ["gmail"],
        "Archived the Weekly Digest newsletter.",
    ),
    (
        "Actually, undo the Show taps thing, I'm done recording.",
        ["settings", "system", "developer"],
        "Show taps is off again.",
    ),
    (
        "What Android version and build am I on?",
        ["settings", "about"],
        "Android 15, build AP4A.250105.002.",
    ),
    (
        "Make the screen timeout 5 minutes instead, and turn on adaptive brightness.",
        ["settings", "display", "screen_timeout"],
        "Timeout is 5 minutes; adaptive brightness on.",
    ),
    (
        "Turn on battery percentage in the status bar.",
        ["settings", "battery"],
        "Battery percentage now shows in the status bar.",
    ),
]

PACKAGES = {
    "settings": "com.android.settings",
    "clock": "com.google.android.deskclock",
    "gmail": "com.google.android.gm",
}


SUMMARIES = (
    "On",
    "Off",
    "Wi-Fi, mobile, data usage, and hotspot",
    "Recent apps, default apps",
    "Volume, haptics, Do Not Disturb",
    "Dark theme, font size, brightness",
    "After 30 seconds of inactivity",
    "Connected",
)


def screenshot(rng: random.Random, screen: str) -> str:
    raw = bytes(rng.getrandbits(8) for _ in range(rng.randint(2600, 4200)))
    elements = []
    y = 320
    for label in SCREENS[screen]:
        h = rng.choice([132, 168, 196])
        rid = "android:id/" + re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")
        elements.append(
            {
                "text": label,
                "resource_id": rid,
                "class": "android.widget.LinearLayout",
                "bounds": [48, y, 1032, y + h],
                "clickable": True,
                "children": [
                    {
                        "class": "android.widget.TextView",
                        "text": label,
                        "bounds": [96, y + 24, 860, y + 72],
                    },
                    {
                        "class": "android.widget.TextView",
                        "text": pick(rng, SUMMARIES),
                        "bounds": [96, y + 76, 860, y + 120],
                    },
                ],
            }
        )
        y += h + 12
    return json.dumps(
        {
            "format": "png",
            "width": 1080,
            "height": 2400,
            "data": base64.b64encode(b"\x89PNG\r\n\x1a\n" + raw).decode(),
            "foreground": PACKAGES.get(screen, "com.android.settings"),
            "elements": elements,
        }
    )


def center(rng: random.Random, screen: str, label: str) -> tuple[int, int]:
    idx = SCREENS[screen].index(label) if label in SCREENS[screen] else 0
    return 540 + rng.randint(-200, 200), 380 + idx * 178 + rng.randint(-20, 20)


def device_session(seed: int = 777) -> str:
    rng = random.Random(seed)
    w = ChatWriter(rng, overhead=2650, factor=1.05, model="gpt-4.1")
    w.system(DEVICE_SYSTEM)
    for request, path, outcome in DEVICE_TASKS:
        w.user(request)
        w.step("Let me look at the screen first.", [("screenshot", {}, screenshot(rng, "home"))])
        first = path[0]
        w.step(
            None,
            [
                (
                    "launch_app",
                    {"package": PACKAGES.get(first, "com.android.settings")},
                    f"Launched {PACKAGES.get(first, 'com.android.settings')}",
                )
            ],
        )
        w.step(None, [("screenshot", {}, screenshot(rng, first))])
        for prev, nxt in itertools.pairwise(path):
            label = next(
                (lab for lab in SCREENS[prev] if nxt.split("_")[0].lower() in lab.lower()),
                SCREENS[prev][rng.randrange(len(SCREENS[prev]))],
            )
            if rng.random() < 0.35:
                w.step(
                    f"'{label}' is below the fold; scrolling.",
                    [
                        (
                            "swipe",
                            {"x1": 540, "y1": 1900, "x2": 540, "y2": 700, "duration_ms": 300},
                            "Swiped",
                        )
                    ],
                )
                w.step(None, [("screenshot", {}, screenshot(rng, prev))])
            x, y = center(rng, prev, label)
            w.step(f"Tapping '{label}'.", [("tap", {"x": x, "y": y}, f"Tapped ({x}, {y})")])
            w.step(None, [("screenshot", {}, screenshot(rng, nxt))])
        last = path[-1]
        target = SCREENS[last][rng.randrange(len(SCREENS[last]))]
        x, y = center(rng, last, target)
        if "password" in request:
            w.step(
                "Tapping Office-5G and entering the password.",
                [("tap", {"x": x, "y": y}, f"Tapped ({x}, {y})")],
            )
            w.step(None, [("type_text", {"text": "Kx7!mT2q"}, "Typed 8 characters")])
            w.step(None, [("press_key", {"key": "enter"}, "Pressed enter")])
        else:
            w.step(f"Selecting '{target}'.", [("tap", {"x": x, "y": y}, f"Tapped ({x}, {y})")])
        if rng.random() < 0.3:
            w.step(
                "That tap missed (the list moved). Retrying.",
                [("tap", {"x": x, "y": y + 40}, f"Tapped ({x}, {y + 40})")],
            )
        w.step("Checking the result.", [("screenshot", {}, screenshot(rng, last))])
        w.step(None, [("press_key", {"key": "home"}, "Pressed home")])
        w.assistant(outcome, [])
    return w.document()


# --- CJK coding session ------------------------------------------------------------------------

CJK_SYSTEM = (
    "你是一个编程助手，可以读取和修改项目文件、运行命令。工具：read_file(path)、"
    "write_file(path, content)、edit_file(path, old, new)、run_command(command)、"
    "search_code(query)。回答请使用用户的语言。"
)

CJK_FILES: dict[str, list[str]] = {
    "src/shop/order_service.py": ["create_order", "cancel_order", "calc_total_price"],
    "src/shop/coupon.py": ["apply_coupon", "validate_coupon", "CouponExpiredError"],
    "src/shop/payment/alipay_client.py": ["AlipayClient", "verify_signature", "refund"],
    "src/shop/payment/wechat_pay.py": ["WechatPayClient", "build_prepay_order"],
    "src/shop/i18n/messages_ja.py": ["MESSAGES_JA", "format_yen"],
    "src/shop/inventory/stock.py": ["reserve_stock", "release_stock", "StockShortageError"],
    "tests/test_order_service.py": ["test_create_order", "test_cancel_order_refund"],
    "tests/test_coupon.py": ["test_expired_coupon", "test_stacking_rules"],
    "docs/使用说明.md": [],
}

CJK_TASKS: list[tuple[str, list[str], str, str]] = [
    (
        "订单取消以后优惠券没有退回给用户，请看一下 cancel_order 的逻辑并修复。",
        ["src/shop/order_service.py", "src/shop/coupon.py"],
        "tests/test_order_service.py",
        "已修复：cancel_order 现在会调用 release_coupon 把优惠券退回。测试全部通过。",
    ),
    (
        "满减券和折扣券叠加时总价算错了，比如 300 元满 200 减 30 再打九折，应该是 243 元。",
        ["src/shop/coupon.py", "src/shop/order_service.py"],
        "tests/test_coupon.py",
        "calc_total_price 先减后折，结果 243.00 元，已加测试 test_stacking_rules。",
    ),
    (
        "支付宝回调验签偶尔失败，日志里是 InvalidSignatureError，帮我查一下原因。",
        ["src/shop/payment/alipay_client.py"],
        "tests/test_order_service.py",
        "verify_signature 没有按 key 排序拼接参数，已修正。",
    ),
    (
        "日本向けに価格表示を円にしたいです。format_yen を追加して、税込み表示にしてください。",
        ["src/shop/i18n/messages_ja.py", "src/shop/order_service.py"],
        "tests/test_order_service.py",
        "format_yen を追加しました。税込み価格（10%）を「¥1,100（税込）」の形式で表示します。",
    ),
    (
        "在庫が足りないときのエラーメッセージが英語のままです。日本語にしてください。",
        ["src/shop/inventory/stock.py", "src/shop/i18n/messages_ja.py"],
        "tests/test_order_service.py",
        "StockShortageError のメッセージを「在庫が不足しています」に変更しました。",
    ),
    (
        "微信支付的预下单接口超时了，build_prepay_order 要加重试，最多三次。",
        ["src/shop/payment/wechat_pay.py"],
        "tests/test_order_service.py",
        "build_prepay_order 已加入指数退避重试（最多 3 次），超时 5 秒。",
    ),
    (
        "等一下，重试不要放在 build_prepay_order 里，改成在调用方 create_order 里做。",
        ["src/shop/order_service.py", "src/shop/payment/wechat_pay.py"],
        "tests/test_order_service.py",
        "已把重试移到 create_order，wechat_pay.py 恢复原样。",
    ),
    (
        "写一份中文的使用说明，放在 docs/使用说明.md，介绍优惠券叠加规则。",
        ["docs/使用说明.md"],
        "tests/test_coupon.py",
        "已写好 docs/使用说明.md，包含叠加规则和例子。",
    ),
    (
        "退款的时候 refund 接口返回 ACQ.TRADE_HAS_CLOSE，这种情况应该当作成功处理。",
        ["src/shop/payment/alipay_client.py", "src/shop/order_service.py"],
        "tests/test_order_service.py",
        "refund 遇到 ACQ.TRADE_HAS_CLOSE 时视为已退款，记录 warning 日志。",
    ),
    (
        "validate_coupon で期限切れのクーポンを使うと 500 エラーになります。CouponExpiredError を "
        "400 で返すようにしてください。",
        ["src/shop/coupon.py"],
        "tests/test_coupon.py",
        "CouponExpiredError を捕まえて 400 と「クーポンの有効期限が切れています」を返します。",
    ),
    (
        "reserve_stock 在高并发下会超卖，帮我用数据库行锁解决。",
        ["src/shop/inventory/stock.py"],
        "tests/test_order_service.py",
        "reserve_stock 改为 SELECT ... FOR UPDATE，并加了并发测试。",
    ),
    (
        "create_order 里计算运费的地方写死了 10 元，改成从配置 SHIPPING_FEE_CENTS 读取。",
        ["src/shop/order_service.py"],
        "tests/test_order_service.py",
        "运费改为读取 SHIPPING_FEE_CENTS，默认 1000 分。",
    ),
    (
        "WechatPayClient の署名方式を HMAC-SHA256 に切り替えてください。MD5 はもう使えません。",
        ["src/shop/payment/wechat_pay.py"],
        "tests/test_order_service.py",
        "WechatPayClient の署名を HMAC-SHA256 に変更し、MD5 の分岐は削除しました。",
    ),
    (
        "release_stock 在订单超时关闭时没有被调用，库存一直被占着。查一下定时任务。",
        ["src/shop/inventory/stock.py", "src/shop/order_service.py"],
        "tests/test_order_service.py",
        "超时关闭订单时现在会调用 release_stock，补了测试。",
    ),
    (
        "apply_coupon 对会员用户要额外打 95 折，但不能和折扣券叠加。",
        ["src/shop/coupon.py"],
        "tests/test_coupon.py",
        "apply_coupon 加入会员 95 折，与折扣券互斥，取优惠更大的一个。",
    ),
    (
        "AlipayClient の refund で部分返金ができるようにしてください。金額は分単位で。",
        ["src/shop/payment/alipay_client.py"],
        "tests/test_order_service.py",
        "refund に amount_cents 引数を追加し、部分返金に対応しました。",
    ),
    (
        "算了，会员折扣先不做了，产品说下个版本再上。把 apply_coupon 的改动撤回。",
        ["src/shop/coupon.py"],
        "tests/test_coupon.py",
        "已撤回会员 95 折的改动，coupon.py 恢复到之前的版本。",
    ),
    (
        "MESSAGES_JA に注文キャンセルの文言が足りません。「注文をキャンセルしました」を追加して。",
        ["src/shop/i18n/messages_ja.py"],
        "tests/test_order_service.py",
        "MESSAGES_JA に order_cancelled を追加しました。",
    ),
    (
        "calc_total_price 的单元测试太慢了，看看是不是每次都连了数据库。",
        ["tests/test_order_service.py", "src/shop/order_service.py"],
        "tests/test_order_service.py",
        "测试里改用内存仓库 FakeOrderRepo，耗时从 12 秒降到 0.8 秒。",
    ),
    (
        "今天改了哪些文件？用中文总结一下，给测试同学看。",
        [],
        "tests/test_order_service.py",
        "今天修改了订单、优惠券、支付宝、微信支付、库存和日文文案，共 8 个文件，测试全部通过。",
    ),
]


def cjk_code(path: str, symbols: list[str], rng: random.Random) -> str:
    if path.endswith(".md"):
        return "# 使用说明\n\n## 优惠券叠加规则\n\n1. 先满减，后折扣。\n2. 同类券不可叠加。\n"
    out = [f'"""{path.rsplit("/", 1)[-1]}：订单与支付相关逻辑。"""', "import logging", ""]
    for sym in symbols:
        out.append(
            f"# TODO: {pick(rng, ['支持多币种', '补充单元测试', '性能优化，避免 N+1 查询'])}"
        )
        if sym[0].isupper():
            out.append(f"class {sym}(Exception if 'Error' in '{sym}' else object):")
            out.append(f'    """{pick(rng, ["处理支付请求", "库存不足", "优惠券已过期"])}。"""')
        else:
            out.append(f"def {sym}(order, user, *, now=None):")
            out.append(
                '    """'
                + pick(rng, ["计算订单总价（单位：分）", "取消订单并退款", "校验优惠券"])
                + '。"""'
            )
            for _ in range(rng.randint(24, 44)):
                out.append(
                    pick(
                        rng,
                        [
                            "    if order.status == '已支付':",
                            "        logger.info('订单 %s 已支付', order.id)",
                            "    total = sum(item.price * item.qty for item in order.items)",
                            "    # 注意：金额一律用分，避免浮点误差",
                            "    raise ValueError('金额不能为负数')",
                            "    return total",
                            "    coupon = order.coupon  # 可能为 None",
                            "    msg = '在庫が不足しています'",
                        ],
                    )
                )
        out.append("")
    return "\n".join(out)


def cjk_session(seed: int = 1688) -> str:
    rng = random.Random(seed)
    w = ChatWriter(rng, overhead=1900, factor=1.12, model="qwen3-coder-plus")
    w.system(CJK_SYSTEM)
    contents: dict[str, str] = {}

    def content(p: str) -> str:
        if p not in contents:
            contents[p] = cjk_code(p, CJK_FILES.get(p, []), rng)
        return contents[p]

    for request, files, test, outcome in CJK_TASKS:
        w.user(request)
        if not files:
            w.step(
                "好的，我看一下今天的改动。",
                [
                    (
                        "run_command",
                        {"command": "git diff --stat"},
                        "\n".join(f" {p} | {rng.randint(3, 60)} ++--" for p in sorted(contents)),
                    )
                ],
            )
            w.assistant(outcome, [])
            continue
        main = files[0]
        syms = CJK_FILES.get(main) or ["使用说明"]
        sym = pick(rng, syms)
        w.step(
            f"先搜索一下 {sym} 的用法。",
            [
                (
                    "search_code",
                    {"query": sym},
                    "\n".join(
                        f"{p}:{i + 1}: {ln}"
                        for p in files
                        for i, ln in enumerate(content(p).split("\n"))
                        if sym in ln
                    )
                    or "无结果",
                )
            ],
        )
        for p in files:
            w.step(None, [("read_file", {"path": p}, content(p))])
        w.step(
            "先跑一下现有测试，确认问题能复现。",
            [
                (
                    "run_command",
                    {"command": f"pytest {test} -q"},
                    f"F..\nFAILED {test}::test_{sym.lower()} - "
                    "AssertionError: 期望 243.00，实际 240.30\n"
                    f"1 failed, {rng.randint(5, 30)} passed",
                )
            ],
        )
        for p in files:
            if p.endswith(".md"):
                body = (
                    content(p)
                    + "\n## 示例\n\n300 元满 200 减 30，再打九折：(300-30)×0.9 = 243 元。\n"
                )
                contents[p] = body
                w.step(f"写入 {p}。", [("write_file", {"path": p, "content": body}, "写入成功")])
                continue
            s = pick(rng, CJK_FILES.get(p) or ["x"])
            old = next((ln for ln in content(p).split("\n") if s in ln), "")
            new = old + "  # 已修复"
            contents[p] = content(p).replace(old, new, 1)
            w.step(
                f"修改 {p} 里的 {s}。",
                [("edit_file", {"path": p, "old": old, "new": new}, f"已修改 {p}（1 处）")],
            )
        w.step("再读一遍确认改动。", [("read_file", {"path": main}, content(main))])
        w.step(
            None,
            [
                (
                    "run_command",
                    {"command": f"pytest {test} -q"},
                    f"{'.' * rng.randint(6, 30)}\n{rng.randint(6, 30)} passed in "
                    f"0.{rng.randint(10, 99)}s",
                )
            ],
        )
        w.assistant(outcome, [])
    return w.document()
