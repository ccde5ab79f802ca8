"""Hostile programs in the compiled languages (C, C++, Rust, Java) and JavaScript, in one batch per
level: each prints the right answer only if its attack worked, so a pass is a broken sandbox. No
hostile program passes; nothing survives the batch (no process, no file on the host); the pool
judges correctly afterwards.

They run only at levels where a job cannot reach this machine's processes (a pid namespace or a
throwaway uid): as root without one, a job's kill(-1, SIGKILL) would end every process here.
"""

import os
import uuid

import pytest

from referee.verifiers import code
from referee.verifiers.code.languages import find_toolchain

TOKEN = f"referee-native-{uuid.uuid4().hex[:12]}"
HOST_PATHS = [os.path.join(os.getcwd(), TOKEN), f"/root/{TOKEN}", os.path.join(os.path.dirname(code.__file__), TOKEN)]
TESTS = {"format": "stdio", "inputs": ["2 3\n"], "outputs": ["5\n"], "time_limit": 1.0, "memory_limit": 256}
OPTIONS = {"timeout": 2.0, "workers": 2, "tmp_mb": 64}

_C_WRITE = "".join(f'    if ((f = fopen("{path}", "w"))) {{ fputs("pwned", f); fclose(f); done = 1; }}\n' for path in HOST_PATHS)
C_ATTACKS = {
    "fork bomb": "#include <unistd.h>\nint main(void) { for (;;) fork(); }\n",
    "memory bomb": "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\nint main(void) {\n    size_t total = 0;\n"
                   "    for (;;) { char *p = malloc(1 << 26); if (!p) break; memset(p, 1, 1 << 26); total += 1 << 26; }\n"
                   "    if (total > (4UL << 30)) puts(\"5\");\n    return 0;\n}\n",
    "output flood": "#include <stdio.h>\n#include <string.h>\nint main(void) {\n    char line[4096];\n"
                    "    memset(line, 'x', sizeof line - 1); line[sizeof line - 1] = 0;\n    for (;;) puts(line);\n}\n",
    "write outside its folder": "#include <stdio.h>\nint main(void) {\n    FILE *f; int done = 0;\n" + _C_WRITE
                                + "    if (done) puts(\"5\");\n    return 0;\n}\n",
    "kill the judge": "#include <signal.h>\n#include <stdio.h>\n#include <unistd.h>\nint main(void) {\n"
                      "    int hit = kill(getppid(), SIGKILL) == 0;\n    hit |= kill(1, SIGKILL) == 0;\n"
                      "    kill(-1, SIGKILL);\n    sleep(1);\n    if (hit) puts(\"5\");\n    return 0;\n}\n",
    "kill the judge by inline assembly": "#include <stdio.h>\n#include <unistd.h>\nint main(void) {\n    long ret;\n"
                                "    __asm__ volatile (\"syscall\" : \"=a\"(ret) : \"a\"(62L), \"D\"((long) getppid()), \"S\"(9L) : \"rcx\", \"r11\", \"memory\");\n"
                                "    if (ret == 0) puts(\"5\");\n    return 0;\n}\n",
}
CPP_ATTACKS = {
    "fork bomb": "#include <unistd.h>\nint main() { while (true) fork(); }\n",
    "memory bomb": "#include <vector>\n#include <cstdio>\nint main() {\n    std::vector<std::vector<char>> hoard;\n"
                   "    for (int i = 0; i < 100; i++) hoard.emplace_back(1 << 26, 'x');\n    std::puts(\"5\");\n}\n",
    "output flood": "#include <cstdio>\nint main() { for (;;) std::fputs(\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\\n\", stdout); }\n",
    "write outside its folder": "#include <cstdio>\nint main() {\n    std::FILE *f; int done = 0;\n"
                                + _C_WRITE.replace("fopen", "std::fopen").replace("fputs", "std::fputs").replace("fclose", "std::fclose")
                                + "    if (done) std::puts(\"5\");\n}\n",
    "kill the judge": "#include <csignal>\n#include <cstdio>\n#include <unistd.h>\nint main() {\n"
                      "    bool hit = kill(getppid(), SIGKILL) == 0;\n    kill(-1, SIGKILL);\n    sleep(1);\n"
                      "    if (hit) std::puts(\"5\");\n}\n",
}
RUST_ATTACKS = {
    "fork bomb": "extern \"C\" { fn fork() -> i32; }\nfn main() { loop { unsafe { fork(); } } }\n",
    "memory bomb": "fn main() {\n    let mut hoard = Vec::new();\n    for _ in 0..100 { hoard.push(vec![1u8; 1 << 26]); }\n"
                   "    println!(\"5\");\n}\n",
    "output flood": "use std::io::Write;\nfn main() {\n    let mut out = std::io::stdout();\n"
                    "    loop { out.write_all(&[b'x'; 4096]).unwrap(); }\n}\n",
    "write outside its folder": "fn main() {\n    let mut done = false;\n"
                                f"    for path in [{', '.join(chr(34) + path + chr(34) for path in HOST_PATHS)}].iter() {{\n"
                                + "        if std::fs::write(path, \"pwned\").is_ok() { done = true; }\n    }\n"
                                "    if done { println!(\"5\"); }\n}\n",
    "kill the judge": "extern \"C\" { fn kill(pid: i32, sig: i32) -> i32; fn getppid() -> i32; }\nfn main() {\n"
                      "    let hit = unsafe { kill(getppid(), 9) == 0 };\n    unsafe { kill(-1, 9); }\n"
                      "    std::thread::sleep(std::time::Duration::from_secs(1));\n    if hit { println!(\"5\"); }\n}\n",
}
JAVA_ATTACKS = {
    "thread bomb": "public class Main {\n    public static void main(String[] a) {\n"
                   "        for (;;) new Thread(() -> { for (;;) {} }).start();\n    }\n}\n",
    "memory bomb": "import java.util.*;\npublic class Main {\n    public static void main(String[] a) {\n"
                   "        List<long[]> hoard = new ArrayList<>();\n        for (int i = 0; i < 1000; i++) hoard.add(new long[1 << 24]);\n"
                   "        System.out.println(5);\n    }\n}\n",
    "output flood": "public class Main {\n    public static void main(String[] a) {\n"
                    "        String line = \"x\".repeat(4096);\n        for (;;) System.out.println(line);\n    }\n}\n",
    "write outside its folder": "import java.nio.file.*;\npublic class Main {\n    public static void main(String[] a) {\n"
                                "        boolean done = false;\n"
                                f"        for (String path : new String[] {{{', '.join(f'{chr(34)}{p}{chr(34)}' for p in HOST_PATHS)}}}) {{\n"
                                "            try { Files.writeString(Path.of(path), \"pwned\"); done = true; } catch (Exception e) { }\n"
                                "        }\n        if (done) System.out.println(5);\n    }\n}\n",
    "kill the judge": "public class Main {\n    public static void main(String[] a) throws Exception {\n"
                      "        boolean hit = ProcessHandle.current().parent().map(ProcessHandle::destroyForcibly).orElse(false);\n"
                      "        for (ProcessHandle p : ProcessHandle.allProcesses().toArray(ProcessHandle[]::new)) {\n"
                      "            if (!p.equals(ProcessHandle.current())) p.destroyForcibly();\n        }\n"
                      "        Thread.sleep(1000);\n        if (hit) System.out.println(5);\n    }\n}\n",
}
JS_ATTACKS = {
    "fork bomb": "const { spawn } = require('child_process');\nfor (;;) { try { spawn(process.execPath, ['-e', 'for(;;){}']); } catch (e) {} }\n",
    "output flood": "const line = 'x'.repeat(4096) + '\\n';\nfor (;;) process.stdout.write(line);\n",
    "write outside its folder": "const fs = require('fs');\nlet done = false;\n"
                                f"for (const path of {HOST_PATHS!r}) {{ try {{ fs.writeFileSync(path, 'pwned'); done = true; }} catch (e) {{}} }}\n"
                                "if (done) console.log(5);\n",
    "kill the judge": "let hit = false;\ntry { process.kill(process.ppid, 'SIGKILL'); hit = true; } catch (e) {}\n"
                      "try { process.kill(-1, 'SIGKILL'); } catch (e) {}\n"
                      "setTimeout(() => { if (hit) console.log(5); }, 1000);\n",
}
# (kill(-1) is tried everywhere but never counts as a hit: Linux reports success even when every
# process it tried refused the signal.)
ATTACKS = {"c": C_ATTACKS, "cpp": CPP_ATTACKS, "rust": RUST_ATTACKS, "java": JAVA_ATTACKS, "javascript": JS_ATTACKS}
RIGHT = {"c": "#include <stdio.h>\nint main(void) { int a, b; scanf(\"%d %d\", &a, &b); printf(\"%d\\n\", a + b); }\n",
         "cpp": "#include <iostream>\nint main() { int a, b; std::cin >> a >> b; std::cout << a + b << std::endl; }\n"}


def guarded(level: str) -> bool:
    """A pid namespace (bubblewrap or referee's own) or a throwaway uid keeps the job from the rest of this machine."""
    try:
        isolation = code.resolve_isolation(level)
    except ValueError:
        return False
    return isolation.minimal_root or isolation.own_uid


def batch(languages):
    cases = [(language, name, program) for language in languages if find_toolchain(language) is not None
             for name, program in ATTACKS[language].items()]
    return cases + [(language, "right", RIGHT[language]) for language in RIGHT if language in languages]


@pytest.mark.parametrize("level, languages", [("auto", tuple(ATTACKS)), ("uid", ("c",)), ("namespaces", ("c", "cpp"))])
def test_hostile_programs_in_every_compiled_language(level, languages, sandboxes):
    if not guarded(level):
        pytest.skip(f"{level} gives jobs neither a pid namespace nor an own uid here: no hostile program runs there")
    if os.geteuid() == 0 and not code.resolve_isolation(level, allow_weak=True).own_uid:
        pytest.skip(f"as root, {level} runs no compiled program (test_compiled_programs_never_run_as_root)")
    cases = batch(languages)
    completions = [f"```{language}\n{program}```" for language, _, program in cases]
    verdicts = code.verify_batch(completions, [TESTS] * len(cases), isolation=level, **OPTIONS)
    got = {(language, name): (v.status, v.reason[:200]) for (language, name, _), v in zip(cases, verdicts)}
    for (language, name, _), verdict in zip(cases, verdicts):
        if name == "right":
            assert verdict.status == "correct", got[language, name]
        else:
            assert verdict.status in ("wrong", "timeout") and verdict.score == 0.0, (language, name, got[language, name])
    assert sandboxes.leftovers() == []
    assert [path for path in HOST_PATHS if os.path.exists(path)] == []
    after = code.verify_batch([f"```c\n{RIGHT['c']}```"], [TESTS], isolation=level, **OPTIONS)
    assert after[0].status == "correct", after[0].reason


def test_compiled_programs_never_run_as_root():
    """Where jobs keep root's uid (namespaces or basic, as root), no process limit binds them: a
    compiled fork bomb filled this machine's process table in a second. Such levels refuse compiled
    programs as an error, never running them."""
    if os.geteuid() != 0:
        pytest.skip("only root's jobs escape the process limit")
    for level in ("namespaces", "basic"):
        try:
            code.resolve_isolation(level, allow_weak=True)
        except ValueError:
            continue
        verdict = code.verify(f"```c\n{C_ATTACKS['fork bomb']}```", TESTS, isolation=level, allow_weak_isolation=True,
                              **OPTIONS)
        assert verdict.status == "error" and "no process limit binds" in verdict.reason, (level, verdict.reason)


def test_a_compiler_fed_an_endless_include_is_stopped_as_a_compile_error():
    if not guarded("auto"):
        pytest.skip("no guarded level here")
    verdict = code.verify("```c\n#include </dev/zero>\nint main(void) { return 0; }\n```", TESTS, **OPTIONS)
    assert verdict.status == "wrong" and verdict.details["tests"][0]["verdict"] == "CE", verdict.reason
