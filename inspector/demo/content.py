"""What the demo agent says and sees: a phone agent doing everyday tasks in English and Chinese.

Everything is fixed text plus choices from a seeded `random.Random`, so a scenario always
produces the same events (ids and times aside). A task is a list of actions the agent plays:

    ("user", text)                      the user's request (begins a run)
    ("call", name, arguments, result)   one tool call and its result (a model call before it)
    ("parallel", [(name, args, result), ...])   several tool calls, then their results
    ("screen", text)                    a screen_context event (the UI tree)
    ("system", text)                    a system_event (battery, network, notifications)
    ("say", text)                       a role_output (the planner narrating between calls)
    ("commit", text)                    the final answer (commits the run)

A tool result that is a dict with "data" is a screenshot: a real base64 PNG that the core must
scrub before it reaches the disk.
"""

from __future__ import annotations

import base64
import json
import random
import struct
import zlib
from collections.abc import Callable
from functools import lru_cache
from typing import Any

Action = tuple[Any, ...]
Task = list[Action]

SYSTEM_PROMPT_TOKENS = 1800
"""The simulated size of the device agent's system prompt (tools, persona, device facts)."""


# --- screenshots ----------------------------------------------------------------------------


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return (
        struct.pack(">I", len(data))
        + kind
        + data
        + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    )


@lru_cache(maxsize=64)
def phone_png(variant: int, width: int = 72, height: int = 160) -> bytes:
    """A valid RGB PNG of a phone screen: status bar, a title, list rows, a little noise."""
    rng = random.Random(variant)
    accent = (rng.randrange(40, 200), rng.randrange(60, 200), rng.randrange(120, 240))
    rows = bytearray()
    for y in range(height):
        rows.append(0)  # filter: none
        for x in range(width):
            if y < 8:
                pixel = (20, 20, 24)
            elif y < 26:
                pixel = accent
            elif (y - 26) % 18 < 2:
                pixel = (210, 210, 214)
            elif 6 <= x < 16 and 6 < (y - 26) % 18 < 14:
                pixel = (accent[0] // 2, accent[1] // 2, accent[2] // 2)
            else:
                pixel = (248, 248, 250)
            noise = rng.randrange(0, 6)
            rows.extend(min(255, c + noise) for c in pixel)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", zlib.compress(bytes(rows), 9))
        + _png_chunk(b"IEND", b"")
    )


def screenshot_result(variant: int, action_output: str) -> dict[str, Any]:
    """A screenshot tool result as the device bridge returns it (base64 payload included)."""
    png = phone_png(variant % 16)
    return {
        "data": base64.b64encode(png).decode("ascii"),
        "width": 72,
        "height": 160,
        "format": "png",
        "size": len(png),
        "action_output": action_output,
    }


def screenshot_json_string(variant: int, action_output: str) -> str:
    """Some bridges return the screenshot as a JSON string; it must be scrubbed too."""
    return json.dumps(screenshot_result(variant, action_output))


# --- small helpers --------------------------------------------------------------------------


def _tap(rng: random.Random, label: str) -> Action:
    x, y = rng.randrange(60, 1020), rng.randrange(200, 2300)
    return ("call", "tap", {"x": x, "y": y, "target": label}, f"ok: tapped '{label}' at ({x}, {y})")


def _shot(rng: random.Random, what: str) -> Action:
    return ("call", "screenshot", {}, screenshot_result(rng.randrange(1000), what))


def _ui(title: str, *items: str) -> str:
    lines = [f"[screen] {title}"]
    lines += [f"  - {item}" for item in items]
    return "\n".join(lines)


# --- short tasks (cheap events: the count path) --------------------------------------------


def task_wifi(rng: random.Random) -> Task:
    return [
        ("user", "Turn on Wi-Fi and connect to HomeNet."),
        _shot(rng, "Home screen, 4 rows of apps, status bar: no Wi-Fi"),
        ("call", "swipe", {"from": [540, 10], "to": [540, 900]}, "ok: quick settings opened"),
        ("screen", _ui("Quick settings", "Wi-Fi: off", "Bluetooth: off", "Flashlight")),
        _tap(rng, "Wi-Fi"),
        ("system", "network changed: Wi-Fi enabled, scanning"),
        _tap(rng, "See all networks"),
        ("screen", _ui("Wi-Fi networks", "HomeNet (secured, strong)", "CafeGuest (open)")),
        _tap(rng, "HomeNet"),
        ("call", "type_text", {"text": "••••••••"}, "ok: typed 8 characters"),
        _tap(rng, "Connect"),
        ("system", "network changed: connected to HomeNet (5 GHz)"),
        _shot(rng, "Wi-Fi settings: HomeNet connected"),
        ("commit", "Wi-Fi is on and the phone is connected to HomeNet (5 GHz)."),
    ]


def task_brightness(rng: random.Random) -> Task:
    return [
        ("user", "把屏幕亮度调到50%并打开护眼模式"),
        ("call", "swipe", {"from": [540, 10], "to": [540, 900]}, "ok: 快捷设置已展开"),
        ("screen", _ui("快捷设置", "亮度 80%", "护眼模式: 关", "勿扰模式: 关")),
        (
            "call",
            "swipe",
            {"from": [860, 420], "to": [540, 420], "target": "亮度滑块"},
            "ok: 亮度 50%",
        ),
        _tap(rng, "护眼模式"),
        ("screen", _ui("快捷设置", "亮度 50%", "护眼模式: 开", "勿扰模式: 关")),
        _shot(rng, "快捷设置: 亮度 50%, 护眼模式已开启"),
        ("commit", "已将屏幕亮度调到 50%，护眼模式已打开。"),
    ]


def task_alarm(rng: random.Random) -> Task:
    return [
        ("user", "明天早上7点设一个闹钟，标签写“晨跑”"),
        ("call", "launch_app", {"package": "com.android.deskclock"}, "ok: 时钟 已启动"),
        _tap(rng, "闹钟"),
        _tap(rng, "添加闹钟"),
        ("call", "type_text", {"text": "07:00"}, "ok: 输入 07:00"),
        _tap(rng, "标签"),
        ("call", "type_text", {"text": "晨跑"}, "ok: 输入 晨跑"),
        _tap(rng, "确定"),
        ("screen", _ui("闹钟", "07:00 晨跑 明天 开", "08:30 工作日 关")),
        ("commit", "好的，已设置明天早上 7:00 的闹钟，标签为“晨跑”。"),
    ]


# --- long tasks (big tool results: the token path, split turns) ----------------------------

_CRASH_LOG = """\
--------- beginning of crash
11-28 21:14:07.512  4821  4821 E AndroidRuntime: FATAL EXCEPTION: main
11-28 21:14:07.512  4821  4821 E AndroidRuntime: Process: com.example.notes, PID: 4821
11-28 21:14:07.512  4821  4821 E AndroidRuntime: java.lang.NullPointerException: Attempt to \
invoke virtual method 'java.lang.String android.net.Uri.getPath()' on a null object reference
11-28 21:14:07.512  4821  4821 E AndroidRuntime: \tat com.example.notes.sync.AttachmentUploader\
.upload(AttachmentUploader.kt:88)
11-28 21:14:07.512  4821  4821 E AndroidRuntime: \tat com.example.notes.sync.SyncWorker.doWork(\
SyncWorker.kt:141)
11-28 21:14:07.512  4821  4821 E AndroidRuntime: \tat androidx.work.CoroutineWorker$startWork$1\
.invokeSuspend(CoroutineWorker.kt:68)
11-28 21:14:07.512  4821  4821 E AndroidRuntime: \tat kotlin.coroutines.jvm.internal.\
BaseContinuationImpl.resumeWith(ContinuationImpl.kt:33)
11-28 21:14:07.512  4821  4821 E AndroidRuntime: \tat android.os.Handler.handleCallback(\
Handler.java:958)
11-28 21:14:07.512  4821  4821 E AndroidRuntime: \tat android.os.Looper.loopOnce(Looper.java:205)
11-28 21:14:07.512  4821  4821 E AndroidRuntime: \tat android.app.ActivityThread.main(\
ActivityThread.java:8177)
11-28 21:14:07.530  1450  1702 W ActivityTaskManager:   Force finishing activity \
com.example.notes/.MainActivity
11-28 21:14:07.612  1450  1471 I ActivityManager: Process com.example.notes (pid 4821) has died: \
fg  TOP
11-28 21:14:09.004  4903  4903 I notes   : SyncWorker retry 3/5 scheduled in 30s
11-28 21:14:39.118  4903  4930 E notes   : AttachmentUploader: attachment 7f3a has no local \
file (deleted by storage cleaner?)
"""

_TOMBSTONE = """\
*** *** *** *** *** *** *** *** *** *** *** *** *** *** *** ***
Build fingerprint: 'acme/phone/phone:14/UP1A.231005.007/10754064:user/release-keys'
Revision: 'MP1.0'
ABI: 'arm64'
Timestamp: 2026-11-28 21:14:07.498+0800
Process uptime: 5412s
Cmdline: com.example.notes
pid: 4821, tid: 4870, name: DefaultDispatch  >>> com.example.notes <<<
signal 6 (SIGABRT), code -1 (SI_QUEUE), fault addr --------
Abort message: 'JNI DETECTED ERROR IN APPLICATION: java_object == null'
backtrace:
  #00 pc 000000000005bd8c  /apex/com.android.runtime/lib64/bionic/libc.so (abort+164)
  #01 pc 00000000006f2a50  /apex/com.android.art/lib64/libart.so (art::Runtime::Abort+472)
  #02 pc 00000000000357c8  /apex/com.android.art/lib64/libbase.so (android::base::LogMessage+448)
  #03 pc 0000000000411c34  /data/app/~~q1/com.example.notes/lib/arm64/libthumbs.so (decode+96)
"""

_BATTERY = """\
Battery usage since last full charge (9 h 12 m):
  Screen                    31%   2 h 05 m on
  com.example.video         22%   foreground 48 m, background 1 h 51 m
  Mobile network standby    11%   signal: poor (1 bar) for 3 h 40 m
  com.example.fitness        9%   GPS: 2 h 12 m (background location)
  com.example.notes          6%   wakelocks: SyncWorker 41 m (retry loop)
  Android System             5%
  Wi-Fi                      4%
  Bluetooth                  2%   WH-1000XM4 connected 3 h
Estimated drain: 11.2%/h (typical for this device: 6–7%/h)
Top wakelocks:
  *job*/com.example.notes/androidx.work.impl.background.systemjob.SystemJobService  41m 12s (318x)
  NlpWakeLock                                                                       12m 40s
  *alarm*/com.example.fitness/.LocationPoller                                        9m 02s (96x)
"""

_DU = """\
/sdcard/DCIM/Camera/VID_20261102_181455.mp4      1.9G
/sdcard/DCIM/Camera/VID_20261019_093010.mp4      1.2G
/sdcard/Movies/Screen recordings/rec_1107.mp4    860M
/sdcard/DCIM/Camera/VID_20261124_201544.mp4      742M
/sdcard/Download/android-studio-2026.1.tar.gz     688M
/sdcard/DCIM/Camera/PANO_20261010_160203.jpg       48M
/sdcard/DCIM/Camera/IMG_20261127_090112.heic       9.1M
Total scanned: 4,812 files, 27.4G
"""


def task_crash_log(rng: random.Random) -> Task:
    return [
        ("user", "Find the crash log in /sdcard/logs and summarise it."),
        (
            "say",
            "Plan: list /sdcard/logs, read the newest crash and tombstone files, then explain "
            "the cause and a fix.",
        ),
        (
            "call",
            "shell",
            {"cmd": "ls -lt /sdcard/logs"},
            "total 96\n-rw-rw---- 1 u0_a231 sdcard_rw 31211 2026-11-28 21:14 crash-20261128.txt\n"
            "-rw-rw---- 1 u0_a231 sdcard_rw  8120 2026-11-28 21:14 tombstone_07\n"
            "-rw-rw---- 1 u0_a231 sdcard_rw 52904 2026-11-20 08:02 logcat-20261120.txt",
        ),
        (
            "parallel",
            [
                ("read_file", {"path": "/sdcard/logs/crash-20261128.txt"}, _CRASH_LOG),
                ("read_file", {"path": "/sdcard/logs/tombstone_07"}, _TOMBSTONE),
            ],
        ),
        (
            "say",
            "Two separate failures at the same moment: a Kotlin NPE in the sync worker and a "
            "native abort in libthumbs. Checking whether the attachment file still exists.",
        ),
        (
            "call",
            "shell",
            {"cmd": "ls /sdcard/Android/data/com.example.notes/files/attachments | head"},
            "ls: /sdcard/Android/data/com.example.notes/files/attachments/7f3a: "
            "No such file or directory\n3c19.jpg\n51aa.pdf\n9e02.m4a",
        ),
        _shot(rng, "Files app: /sdcard/logs with three files"),
        (
            "commit",
            "Summary of the crash log (/sdcard/logs/crash-20261128.txt, 28 Nov 21:14):\n\n"
            "1. What crashed: com.example.notes, on the main thread, with a "
            "NullPointerException in AttachmentUploader.upload (AttachmentUploader.kt:88), "
            "called from SyncWorker.doWork.\n"
            "2. Why: attachment 7f3a has no local file any more — the storage cleaner deleted "
            "it — so Uri.getPath() is called on null. I confirmed the file is missing.\n"
            "3. Side effect: the worker retries (3/5 so far) and each retry crashes again; "
            "tombstone_07 shows a second, native abort in libthumbs.so (JNI java_object == "
            "null) while generating the thumbnail of the same attachment.\n"
            "4. Fix: in the app, skip or re-download attachments whose file is gone instead of "
            "dereferencing the Uri; as a workaround now, clear the Notes app's sync queue or "
            "remove attachment 7f3a from the note.\n\n"
            "Nothing else in the last week's logs points at this app.",
        ),
    ]


def task_battery(rng: random.Random) -> Task:
    return [
        ("system", "battery low: 15% remaining, battery saver suggested"),
        ("user", "Why is my battery draining so fast today? Check the battery usage."),
        ("call", "shell", {"cmd": "dumpsys batterystats --charged | head -40"}, _BATTERY),
        _shot(rng, "Settings > Battery > Battery usage, chart falling steeply since 09:00"),
        (
            "call",
            "shell",
            {"cmd": "dumpsys location | grep -A2 com.example.fitness"},
            "com.example.fitness: background location, interval 60s, last fix 21:02 "
            "(gps, accuracy 4m)",
        ),
        (
            "commit",
            "Your battery drains about 11%/h today, roughly twice the usual rate. The main "
            "causes:\n"
            "- Poor mobile signal (1 bar for almost 4 hours) keeps the radio working hard "
            "(11%).\n"
            "- com.example.video ran in the background for nearly 2 hours (22%).\n"
            "- com.example.fitness polls GPS every 60 s in the background (9%).\n"
            "- The Notes app's sync worker is stuck in a crash-and-retry loop and holds "
            "wakelocks (41 min) — that is the crash we looked at earlier.\n\n"
            "Suggestions: turn on Battery Saver now, restrict background use for the video "
            "and fitness apps, and fix or clear the Notes sync queue.",
        ),
    ]


def task_bluetooth(rng: random.Random) -> Task:
    return [
        ("user", "打开 设置 → 蓝牙 and pair the headphones (WH-1000XM4)."),
        ("call", "launch_app", {"package": "com.android.settings"}, "ok: 设置 已启动"),
        _tap(rng, "蓝牙"),
        ("screen", _ui("蓝牙", "蓝牙: 开", "已配对的设备: 车载音响", "可用设备: 正在搜索…")),
        ("system", "notification: WH-1000XM4 is in pairing mode"),
        _shot(rng, "蓝牙: 可用设备 WH-1000XM4, Pixel Buds"),
        _tap(rng, "WH-1000XM4"),
        ("screen", _ui("配对请求", "与 WH-1000XM4 配对？", "取消", "配对")),
        _tap(rng, "配对"),
        ("system", "bluetooth: WH-1000XM4 connected (A2DP, LDAC)"),
        (
            "commit",
            "耳机 WH-1000XM4 已配对并连接（A2DP，LDAC 编码）。下次打开耳机时会自动连接。",
        ),
    ]


def task_storage(rng: random.Random) -> Task:
    return [
        ("user", "I'm out of storage. Find the five largest files on the phone and list them."),
        ("call", "shell", {"cmd": "df -h /sdcard"}, "/dev/fuse  118G  116G  2.1G  99% /sdcard"),
        (
            "call",
            "shell",
            {"cmd": "find /sdcard -type f -size +5M -exec du -h {} + | sort -rh | head -7"},
            _DU,
        ),
        (
            "say",
            "The camera videos dominate. Checking whether they are already backed up before "
            "suggesting to delete anything.",
        ),
        (
            "call",
            "shell",
            {"cmd": "content query --uri content://com.example.photos.backup/status"},
            "Row: 0 backed_up=1, last_backup=2026-11-28T03:10:00Z, pending=2",
        ),
        _shot(rng, "Photos app: backup complete except 2 items"),
        (
            "commit",
            "The five largest files (2.1 GB free of 118 GB):\n"
            "1. /sdcard/DCIM/Camera/VID_20261102_181455.mp4 — 1.9 GB\n"
            "2. /sdcard/DCIM/Camera/VID_20261019_093010.mp4 — 1.2 GB\n"
            "3. /sdcard/Movies/Screen recordings/rec_1107.mp4 — 860 MB\n"
            "4. /sdcard/DCIM/Camera/VID_20261124_201544.mp4 — 742 MB\n"
            "5. /sdcard/Download/android-studio-2026.1.tar.gz — 688 MB\n\n"
            "The camera videos are backed up (only 2 recent items are still pending), so "
            "deleting the two October/November videos and the old download would free about "
            "3.8 GB. Tell me which ones to delete and I will do it.",
        ),
    ]


def task_email(rng: random.Random) -> Task:
    reply = (
        "Hi Alice,\n\nSorry — I'm running about 20 minutes late for our 3 pm review. "
        "Please start without me; I'll join as soon as I can and catch up from the notes.\n\n"
        "Thanks,\nSam"
    )
    return [
        ("user", "Reply to the last email from Alice and tell her I'll be 20 minutes late."),
        ("call", "launch_app", {"package": "com.example.mail"}, "ok: Mail started"),
        (
            "screen",
            _ui(
                "Inbox",
                "Alice Chen — Design review at 3 pm (today 13:02)",
                "GitHub — [repo] 3 new issues",
                "Bank — Your statement is ready",
            ),
        ),
        _tap(rng, "Alice Chen — Design review at 3 pm"),
        _tap(rng, "Reply"),
        ("call", "type_text", {"text": reply}, "ok: typed 196 characters"),
        (
            "call",
            "capture_screen",
            {"region": "full"},
            screenshot_json_string(
                rng.randrange(1000), "Reply draft to Alice Chen, body filled, Send enabled"
            ),
        ),
        _tap(rng, "Send"),
        ("system", "notification: message sent to alice.chen@example.com"),
        ("commit", f"Sent. I replied to Alice's 'Design review at 3 pm' email:\n\n{reply}"),
    ]


def task_photos_cjk(rng: random.Random) -> Task:
    return [
        ("user", "帮我整理一下相册里上周的照片，按地点分类，并把模糊的照片挑出来。"),
        ("call", "launch_app", {"package": "com.example.photos"}, "ok: 相册 已启动"),
        (
            "call",
            "query_media",
            {"from": "2026-11-21", "to": "2026-11-27", "group_by": "location"},
            "上海 徐汇区: 38 张\n杭州 西湖区: 61 张\n苏州 姑苏区: 17 张\n未知地点: 9 张",
        ),
        _shot(rng, "相册: 上周 125 张照片, 按地点分组"),
        (
            "call",
            "detect_blur",
            {"album": "上周", "threshold": 0.35},
            "模糊照片 12 张: IMG_1121_0932 (杭州), IMG_1122_1810 (杭州), IMG_1124_0715 (上海), "
            "IMG_1124_0716 (上海), IMG_1125_2203 (苏州) 等",
        ),
        (
            "say",
            "已经找到 12 张模糊照片。接下来创建三个地点相册，并把模糊照片放进“待删除”。",
        ),
        (
            "parallel",
            [
                ("create_album", {"name": "2026-11 杭州"}, "ok: 已创建相册 2026-11 杭州 (61 张)"),
                ("create_album", {"name": "2026-11 上海"}, "ok: 已创建相册 2026-11 上海 (38 张)"),
            ],
        ),
        ("call", "create_album", {"name": "2026-11 苏州"}, "ok: 已创建相册 2026-11 苏州 (17 张)"),
        ("call", "move_media", {"ids": "blurry:12", "to": "待删除"}, "ok: 已移动 12 张照片"),
        (
            "commit",
            "上周的照片已经整理好了：\n"
            "· 杭州 西湖区 61 张 → 相册“2026-11 杭州”\n"
            "· 上海 徐汇区 38 张 → 相册“2026-11 上海”\n"
            "· 苏州 姑苏区 17 张 → 相册“2026-11 苏州”\n"
            "· 另有 9 张没有地点信息，留在原处。\n"
            "模糊的照片共 12 张，已放进“待删除”相册，你确认后我再删除它们。",
        ),
    ]


def task_language_ja(rng: random.Random) -> Task:
    return [
        ("user", "システムの言語を日本語に切り替えて、キーボードも日本語入力を追加してください。"),
        ("call", "launch_app", {"package": "com.android.settings"}, "ok: 設定 を起動しました"),
        _tap(rng, "システム"),
        _tap(rng, "言語と入力"),
        ("screen", _ui("言語", "English (United States)", "中文 (简体)", "+ 言語を追加")),
        _tap(rng, "日本語"),
        ("system", "locale changed: ja-JP"),
        _tap(rng, "画面キーボード"),
        _tap(rng, "日本語 (フリック入力)"),
        (
            "commit",
            "システムの言語を日本語に切り替え、キーボードに日本語（フリック入力）を追加しました。",
        ),
    ]


def task_notes_long_zh(rng: random.Random) -> Task:
    outline = (
        "会议纪要（11月28日 产品周会）\n"
        "一、上周进展：同步功能修复了附件上传的崩溃问题，灰度 5%。\n"
        "二、本周计划：1）完成离线模式；2）优化缩略图生成，减少耗电；3）准备双十二活动页面。\n"
        "三、风险：存储清理工具会误删附件，需要和系统团队确认白名单。\n"
        "四、待办：小王负责白名单方案，周三前给出结论；小李跟进耗电数据。"
    )
    return [
        ("user", "把今天产品周会的录音转成文字，整理成会议纪要，保存到备忘录。"),
        (
            "call",
            "read_file",
            {"path": "/sdcard/Recordings/周会_1128.m4a"},
            {"duration_s": 2710, "codec": "aac", "note": "audio file, 2.6 MB"},
        ),
        (
            "call",
            "transcribe",
            {"path": "/sdcard/Recordings/周会_1128.m4a", "lang": "zh"},
            "（转写）大家好，先看上周进展。同步这边，附件上传崩溃已经修了，现在灰度百分之五。"
            "然后本周主要是离线模式，还有缩略图那块耗电太高，要优化。运营那边要准备双十二的活动页。"
            "风险方面，系统自带的存储清理会把附件删掉，我们需要跟系统团队确认白名单。"
            "小王周三前给白名单方案，小李跟进一下耗电的数据。好，今天就到这里。",
        ),
        ("say", "转写完成，共 2710 秒。下面整理成纪要并保存。"),
        ("call", "launch_app", {"package": "com.example.notes"}, "ok: 备忘录 已启动"),
        ("call", "type_text", {"text": outline}, "ok: 已输入 214 个字符"),
        _shot(rng, "备忘录: 会议纪要（11月28日 产品周会）已保存"),
        ("commit", "会议纪要已保存到备忘录，内容如下：\n\n" + outline),
    ]


_ARTICLE_ZH = """\
标题：城市夜跑的兴起
近年来，越来越多的上班族选择在下班后夜跑。与清晨跑步相比，夜跑的时间更灵活，也更容易坚持。\
调查显示，在一线城市，约有三成的跑步爱好者主要在晚上七点到十点之间运动。\
专家提醒，夜跑前应避免大量进食，最好在饭后一个半小时再出发；路线要选择照明良好、车辆较少的公园或绿道；\
穿着带有反光条的衣服，并告知家人自己的路线。对于初学者，建议从每次三公里、每周三次开始，\
逐步增加距离，不要一开始就追求配速。跑后要做十分钟左右的拉伸，并及时补充水分。\
此外，睡前剧烈运动可能影响入睡，因此夜跑最好在睡前两小时结束。\
许多城市也开始为夜跑者提供便利：延长公园开放时间、增加路灯和饮水点，部分街道还设立了夜跑专用道。\
跑步应用的数据显示，结伴夜跑的用户坚持时间平均比独自跑步的用户长百分之四十。\
总之，夜跑是一种适合现代都市生活节奏的运动方式，只要注意安全与节奏，就能收获健康与放松。
"""


def task_article_zh(rng: random.Random) -> Task:
    return [
        ("user", "帮我读一下下载目录里那篇关于夜跑的文章，用三句话总结，再给我一个入门计划。"),
        (
            "call",
            "shell",
            {"cmd": "ls /sdcard/Download/*.txt"},
            "/sdcard/Download/城市夜跑的兴起.txt\n/sdcard/Download/发票_11月.txt",
        ),
        ("call", "read_file", {"path": "/sdcard/Download/城市夜跑的兴起.txt"}, _ARTICLE_ZH),
        _shot(rng, "文件管理: 下载 / 城市夜跑的兴起.txt"),
        (
            "commit",
            "三句话总结：\n"
            "1. 夜跑因时间灵活、容易坚持，正在上班族中流行，约三成跑者主要在晚上运动。\n"
            "2. 安全要点：饭后一个半小时再跑，选照明好、车少的路线，"
            "穿反光衣物并告知家人，睡前两小时结束。\n"
            "3. 城市在延长公园开放时间、增设路灯和夜跑道，结伴跑步的人坚持得更久。\n\n"
            "入门计划（四周）：第一周每次 3 公里、每周 3 次，配速随意；第二周 3.5 公里；"
            "第三周 4 公里并加一次轻松的间歇跑；第四周 5 公里。每次跑后拉伸 10 分钟，及时补水。",
        ),
    ]


TASKS: dict[str, Callable[[random.Random], Task]] = {
    "wifi": task_wifi,
    "brightness": task_brightness,
    "alarm": task_alarm,
    "crash_log": task_crash_log,
    "battery": task_battery,
    "bluetooth": task_bluetooth,
    "storage": task_storage,
    "email": task_email,
    "photos_cjk": task_photos_cjk,
    "language_ja": task_language_ja,
    "notes_zh": task_notes_long_zh,
    "article_zh": task_article_zh,
}


# --- the long scenario: a big, cheap stream ------------------------------------------------

_LONG_TARGETS = (
    "Settings",
    "Wi-Fi",
    "Bluetooth",
    "Battery",
    "Display",
    "设置",
    "蓝牙",
    "显示",
    "Back",
    "OK",
)


def long_run(rng: random.Random, run: int, size: int) -> list[dict[str, Any]]:
    """`size` events of one long autonomous run (a UI regression sweep), ready to append."""
    events: list[dict[str, Any]] = [
        {
            "type": "user_input",
            "role": "user",
            "content": f"Run UI regression sweep #{run + 1}: visit every settings page and "
            "check it renders (检查每个设置页面是否正常显示).",
        }
    ]
    step = 0
    while len(events) < size - 1:
        step += 1
        call_id = f"call_{rng.getrandbits(48):012x}"
        target = rng.choice(_LONG_TARGETS)
        if step % 25 == 0:
            events.append(
                {"type": "screen_context", "role": "system", "content": _ui(target, "ok")}
            )
        if step % 40 == 0:
            events.append(
                {
                    "type": "tool_call",
                    "role": "assistant",
                    "name": "screenshot",
                    "tool_call_id": call_id,
                    "arguments": {},
                }
            )
            events.append(
                {
                    "type": "tool_result",
                    "role": "tool",
                    "name": "screenshot",
                    "tool_call_id": call_id,
                    "content": screenshot_result(step, f"{target} page"),
                }
            )
            continue
        events.append(
            {
                "type": "tool_call",
                "role": "assistant",
                "name": "tap",
                "tool_call_id": call_id,
                "arguments": {"target": target, "step": step},
            }
        )
        events.append(
            {
                "type": "tool_result",
                "role": "tool",
                "name": "tap",
                "tool_call_id": call_id,
                "content": f"ok: {target} page rendered in {rng.randrange(40, 400)} ms",
            }
        )
    return events
