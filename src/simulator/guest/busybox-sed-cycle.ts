import { longest, type PosixRegex } from './posix-regex.js';
import { SedDie, type SedCmd, type SedScript, type SedWFile } from './busybox-sed-script.js';

/** What get_next_line notes of a line's end besides its newline or NUL: none (the input's last line), or a NUL that ended the input. */
export const noEol = '\u0001';
export const lastIsNul = '\u0002';

/** Where sed writes: stdout, or -i's new file. */
export interface Sink {
  write(text: string): void;
}

/** A line of the input and how it ended (`\n`, `\0`, noEol or lastIsNul). */
export interface Next {
  line: string;
  gc: string;
}

/** What the cycle reads: the inputs' lines, and the lines of a file `r` reads (none when it does not open). */
export interface SedInput {
  read(): Promise<Next | undefined>;
  readLines(name: string): Promise<string[]>;
}

/** A branch loop that read no line past the limit. */
export class SedLimit extends Error {
  override readonly name = 'SedLimit';
}

/**
 * busybox 1.35's sed cycle (editors/sed.c: process_files, do_subst_command, puts_maybe_newline and
 * the append queue), ported: each line of the input through the script, read a line ahead for `$`.
 * The hold space and the lines `a` and `r` queued are sed's for the whole run, over each -i file and
 * each stretch up to a `-` operand. A branch loop that reads no line is stopped after `limit` jumps
 * (just-bash's maxSedIterations).
 */
export class SedCycles {
  private hold?: string;
  private appends: string[] = [];

  constructor(
    private readonly script: SedScript,
    private readonly input: SedInput,
    private readonly limit: number,
  ) {}

  /** get_next_line: the appended text goes out, then the input's next line. */
  private nextLine(lpc: { c: string }, sink: Sink): Promise<Next | undefined> {
    this.flushAppend(lpc, sink);
    return this.input.read();
  }

  /** puts_maybe_newline. */
  private puts(s: string, sink: Sink, lpc: { c: string }, lastGetsChar: string): void {
    if (lpc.c !== '\n' && lpc.c !== '\0') {
      sink.write('\n');
      lpc.c = '\n';
    }
    sink.write(s);
    if (s) lpc.c = 'x';
    if (lastGetsChar === lastIsNul) {
      sink.write('\0');
      lpc.c = 'x';
    } else if (lastGetsChar !== noEol) {
      sink.write(lastGetsChar);
      lpc.c = lastGetsChar;
    }
  }

  private putsW(s: string, file: SedWFile, lastGetsChar: string): void {
    const lpc = { c: file.lastChar };
    this.puts(s, { write: (text) => file.data.push(text) }, lpc, lastGetsChar);
    file.lastChar = lpc.c;
  }

  private flushAppend(lpc: { c: string }, sink: Sink): void {
    const appends = this.appends;
    this.appends = [];
    for (const data of appends) this.puts(data, sink, lpc, '\n');
  }

  /** process_files: the script over the input's lines, written to `sink`. */
  async run(sink: Sink): Promise<void> {
    const { script } = this;
    const cmds = script.cmds;
    const lpc = { c: '\n' };
    let linenum = 0;
    let next = await this.nextLine(lpc, sink);
    let jumps = 0;
    for (;;) {
      let substituted = false;
      if (!next) return;
      let ps = next.line;
      let lastGetsChar = next.gc;
      next = await this.nextLine(lpc, sink);
      linenum++;
      jumps = 0;
      // How the cycle ends: print the pattern space (discard_commands) or not (discard_line).
      let ending: 'print' | 'discard' = 'print';
      restart: for (;;) {
        for (let k = 0; k < cmds.length; k++) {
          let cmd: SedCmd = cmds[k]!;
          const oldMatched = cmd.inMatch;
          if (!oldMatched) cmd.endLine = cmd.endLineOrig;
          cmd.inMatch =
            cmd.inMatch ||
            (!cmd.begLine && !cmd.endLine && !cmd.begMatch && !cmd.endMatch) ||
            (cmd.begLine > 0 && (cmd.endLine || cmd.endMatch ? cmd.begLine <= linenum : cmd.begLine === linenum)) ||
            this.begMatch(cmd, ps) ||
            (cmd.begLine === -1 && next === undefined);
          const matched = cmd.inMatch;
          if (matched) {
            if (cmd.endLine <= -2) cmd.endLine = linenum + (-cmd.endLine - 2);
            if (cmd.begLine > 0) cmd.begLine = -2;
            cmd.inMatch = !(
              (cmd.endLine ? (cmd.endLine === -1 ? !next : cmd.endLine <= linenum) : !cmd.endMatch) ||
              (cmd.endMatch !== undefined && oldMatched && test(cmd.endMatch.re, ps))
            );
          }
          if (cmd.cmd === '{') {
            if (cmd.invert ? matched : !matched) {
              let nest = 0;
              for (;;) {
                if (cmd.cmd === '{') nest++;
                if (cmd.cmd === '}' && --nest === 0) break;
                if (++k >= cmds.length) throw new SedDie('unterminated {');
                cmd = cmds[k]!;
              }
            }
            continue;
          }
          if (cmd.invert ? matched : !matched) continue;
          if (cmd.begMatch) script.previousRegex = cmd.begMatch;
          switch (cmd.cmd) {
            case '=':
              sink.write(`${linenum}\n`);
              break;
            case 'P': {
              const nl = ps.indexOf('\n');
              this.puts(nl >= 0 ? ps.slice(0, nl) : ps, sink, lpc, '\n');
              break;
            }
            case 'p':
              this.puts(ps, sink, lpc, '\n');
              break;
            case 'D': {
              const nl = ps.indexOf('\n');
              if (nl >= 0) {
                ps = ps.slice(nl + 1);
                continue restart;
              }
              ending = 'discard';
              break restart;
            }
            case 'd':
              ending = 'discard';
              break restart;
            case 's': {
              const result = this.substitute(cmd, ps);
              if (result === undefined) break;
              ps = result;
              substituted = true;
              if (cmd.subP) this.puts(ps, sink, lpc, lastGetsChar);
              if (cmd.swFile) this.putsW(ps, cmd.swFile, lastGetsChar);
              break;
            }
            case 'a':
              this.appends.push(cmd.string!);
              break;
            case 'i':
              this.puts(cmd.string!, sink, lpc, '\n');
              break;
            case 'c':
              if (!cmd.inMatch) this.puts(cmd.string!, sink, lpc, '\n');
              ending = 'discard';
              break restart;
            case 'r':
              this.appends.push(...(await this.input.readLines(cmd.string!)));
              break;
            case 'w':
              this.putsW(ps, cmd.swFile!, lastGetsChar);
              break;
            case 'n':
              if (!script.beQuiet) this.puts(ps, sink, lpc, lastGetsChar);
              if (next === undefined) {
                ending = 'discard';
                break restart;
              }
              ps = next.line;
              lastGetsChar = next.gc;
              next = await this.nextLine(lpc, sink);
              substituted = false;
              linenum++;
              jumps = 0;
              break;
            case 'q':
              next = undefined;
              break restart;
            case 'N':
              if (next === undefined) break restart;
              ps = `${ps}\n${next.line}`;
              lastGetsChar = next.gc;
              next = await this.nextLine(lpc, sink);
              linenum++;
              jumps = 0;
              break;
            case 't':
            case 'T':
            case 'b': {
              if (cmd.cmd === 't') {
                if (!substituted) break;
                substituted = false;
              } else if (cmd.cmd === 'T' && substituted) break;
              if (!cmd.string) break restart;
              const label = cmds.findIndex((c) => c.cmd === ':' && c.string === cmd.string);
              if (label < 0) throw new SedDie(`can't find label for jump to '${cmd.string}'`);
              if (++jumps > this.limit) throw new SedLimit();
              k = label;
              break;
            }
            case 'y': {
              const pairs = cmd.string!;
              let out = '';
              for (const ch of ps) {
                let to = ch;
                for (let j = 0; j < pairs.length; j += 2) {
                  if (pairs[j] === ch) {
                    to = pairs[j + 1]!;
                    break;
                  }
                }
                out += to;
              }
              ps = out;
              break;
            }
            case 'g':
              ps = this.hold ?? '';
              break;
            case 'G':
              ps = `${ps}\n${this.hold ?? ''}`;
              lastGetsChar = '\n';
              break;
            case 'h':
              this.hold = ps;
              break;
            case 'H':
              this.hold = `${this.hold ?? ''}\n${ps}`;
              break;
            case 'x': {
              const held = this.hold ?? '';
              this.hold = ps;
              ps = held;
              lastGetsChar = '\n';
              break;
            }
          }
        }
        break;
      }
      if (ending === 'print' && !script.beQuiet) this.puts(ps, sink, lpc, lastGetsChar);
      this.flushAppend(lpc, sink);
    }
  }

  /** beg_match: whether the command's first regex matches (it becomes the previous regex). */
  private begMatch(cmd: SedCmd, ps: string): boolean {
    const hit = cmd.begMatch !== undefined && test(cmd.begMatch.re, ps);
    if (hit) this.script.previousRegex = cmd.begMatch;
    return hit;
  }

  /** do_subst_command: the pattern space after the substitution, or undefined when nothing was replaced. */
  private substitute(cmd: SedCmd, line: string): string | undefined {
    const regex = cmd.subMatch ?? this.script.previousRegex;
    if (!regex) throw new SedDie('no previous regexp');
    this.script.previousRegex = regex;
    let m = exec(regex, regex.re, line, 0);
    if (!m) return undefined;
    let out = '';
    let pos = 0;
    let count = 0;
    let altered = false;
    let prevMatchEmpty = true;
    let triedAtEol = false;
    do {
      const start = m.index - pos;
      let end = start + m[0].length;
      count++;
      if (cmd.whichMatch && cmd.whichMatch !== count) {
        out += line.slice(pos, pos + end);
        pos += end;
        if (start === end && pos < line.length) out += line[pos++];
      } else {
        out += line.slice(pos, pos + start);
        if (prevMatchEmpty || start !== 0 || start !== end) {
          out += replacement(cmd.string!, m);
          altered = true;
        }
        prevMatchEmpty = start === end;
        if (prevMatchEmpty) {
          if (pos + end >= line.length) triedAtEol = true;
          else out += line[pos + end++];
        }
        pos += end;
        if (cmd.whichMatch !== 0) break;
      }
      if (pos >= line.length) {
        if (triedAtEol) break;
        triedAtEol = true;
      }
    } while ((m = exec(regex, regex.notBol, line, pos)));
    out += line.slice(pos);
    return altered ? out : undefined;
  }
}

/** Whether the regex matches anywhere in `s`. */
function test(re: RegExp, s: string): boolean {
  re.lastIndex = 0;
  return re.test(s);
}

/** regexec from `from`: the leftmost-longest match of `re` (one of the regex's two RegExps). */
function exec(regex: PosixRegex, re: RegExp, s: string, from: number): RegExpExecArray | null {
  re.lastIndex = from;
  const m = re.exec(s);
  return m && regex.ambiguous ? longest(regex, re, s, m) : m;
}

/** do_subst_w_backrefs: `\0`–`\9` the groups, `&` the match, `\c` the character c. */
function replacement(replace: string, m: RegExpExecArray): string {
  let out = '';
  for (let i = 0; i < replace.length; i++) {
    const c = replace[i]!;
    if (c === '\\') {
      const d = replace[++i] ?? '';
      if (d >= '0' && d <= '9') out += m[Number(d)] ?? '';
      else out += d;
    } else if (c === '&') out += m[0];
    else out += c;
  }
  return out;
}
