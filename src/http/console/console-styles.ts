/**
 * The console's styles. Status is always text and an icon; colour only repeats it. Below 760 px
 * the tables become one card per row (each cell labelled), so a phone reads them without scrolling
 * sideways.
 */
export const consoleStyles = `
:root{--fg:#17202e;--muted:#5b6576;--bg:#f6f7f9;--card:#fff;--line:#d5dae2;--bad:#b3261e;--badbg:#fde8e7;--warn:#8a5a00;--warnbg:#fff3d6;--ok:#1e6b34;--okbg:#e4f4e8;--info:#1d4f91;--infobg:#e5eefb}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:var(--fg);background:var(--bg)}
a{color:var(--info)} :focus-visible{outline:3px solid #2962ff;outline-offset:2px}
.skip{position:absolute;left:-999px} .skip:focus{left:.5rem;top:.5rem;background:#fff;padding:.3rem;z-index:9}
header{display:flex;flex-wrap:wrap;align-items:center;gap:.4rem 1.2rem;padding:.6rem 1rem;background:#1d2738;color:#fff}
header h1{font-size:1.15rem;margin:0} header a{color:#cfe0ff} header nav{display:flex;flex-wrap:wrap;gap:.2rem .9rem}
main{padding:.8rem 1rem;display:grid;gap:1rem;grid-template-columns:minmax(0,1fr)}
#side{display:grid;gap:1rem;align-content:start;min-width:0}
#incidents{max-height:75vh;overflow:auto}
#timerange{grid-column:1/-1;background:var(--card);border:1px solid var(--line);border-radius:6px;padding:.4rem .8rem;margin:0} #timerange p{flex-basis:100%;margin:0}
#executions{max-height:80vh;overflow:auto}
@media(min-width:1200px){main{grid-template-columns:minmax(0,1.6fr) minmax(380px,1fr)} #fleet,#plots,#executions,#timeline{grid-column:1} #side{grid-column:2;grid-row:2/span 4}}
@media(max-width:1199px){#side{display:contents} #timerange{order:0} #health{order:1} #incidents{order:2;max-height:60vh} #fleet{order:3} #alerts{order:4} #timeline{order:5} #executions{order:6} #dlq{order:7} #operator{order:8} #plots{order:9}}
svg .sel{fill:rgb(41 98 255 / .18);stroke:#2962ff} #zoom-plot{cursor:crosshair;touch-action:none}
.state-timeline svg .span-run{fill:#9fd3ae} .state-timeline svg .span-stop{fill:#f0d28a} .state-timeline svg .span-err{fill:#f2a19b} .state-timeline svg .span-frz{fill:#a9c7f0} .state-timeline svg .span-other{fill:#ccc}
.state-timeline svg .mark line{stroke:#333;stroke-width:1.5} .state-timeline svg .mark-operator line{stroke:#1d4f91} .state-timeline svg .mark-incident line{stroke:#b3261e} .state-timeline svg .mark-health line{stroke:#8a1c7c}
.probe-health-healthy{color:var(--ok)} .probe-health-unhealthy{color:var(--bad);background:var(--badbg);font-weight:600} .probe-health-unknown{color:var(--warn)} .flag.ok{background:var(--okbg);color:var(--ok)} code.probe-output{font-size:12px;white-space:pre-wrap;overflow-wrap:anywhere}
.legend .key{display:inline-block;width:.9rem;height:.7rem;margin:0 .2rem 0 .5rem;border:1px solid #999} .key.span-run{background:#9fd3ae} .key.span-stop{background:#f0d28a} .key.span-err{background:#f2a19b} .key.span-frz{background:#a9c7f0}
ol.marks{margin:.3rem 0;padding-left:1.2rem;font-size:13px} button.link{border:0;background:none;color:var(--info);text-decoration:underline;padding:0}
td.params code{font-size:12px;overflow-wrap:anywhere} details.why{margin:.2rem 0 .3rem} ul.firing li{margin-bottom:.3rem} a.tl{text-decoration:none;margin-left:.2rem}
.panel-state{margin:.2rem 0 .4rem;padding:.2rem .45rem;border-radius:3px;font-weight:600}
.panel-state.stale{background:var(--warnbg);color:var(--warn);border:1px solid #e0c27a} .panel-state.bad{background:var(--badbg);color:var(--bad);border:1px solid #f2b8b5}
section[data-state=stale]>:not(h2):not(.panel-state){opacity:.6}
button.changes[hidden]{display:block;visibility:hidden} button.changes{display:block;width:100%;margin:.3rem 0;background:var(--infobg);border-color:var(--info);color:var(--info);font-weight:600}
header button{background:#2c3a52;color:#fff;border-color:#8fa3c4} header button[aria-pressed=true]{background:var(--warnbg);color:var(--warn)}
label.inline{flex-direction:row;align-items:center;gap:.3rem} header label.inline{color:#cfe0ff} #page-jump{width:5rem}
dialog{border:1px solid var(--line);border-radius:6px;max-width:min(36rem,92vw);padding:1rem} dialog::backdrop{background:rgb(0 0 0 / .35)}
dialog h2{margin-top:0} .dialog-buttons{display:flex;gap:.6rem;justify-content:flex-end;margin-top:.8rem}
button.danger{background:var(--bad);color:#fff;border-color:var(--bad)}
details.loop{margin:.2rem 0} details.loop ol{margin:.2rem 0;padding-left:1.2rem;font-size:13px}
.rel{white-space:nowrap} td.at .rel{display:block}
section,.card{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:.6rem .8rem;min-width:0}
h2{font-size:1.05rem;margin:.1rem 0 .5rem} h3{font-size:.95rem;margin:.7rem 0 .3rem}
.muted,small{color:var(--muted)}
.counts{display:flex;flex-wrap:wrap;gap:.4rem;margin:0 0 .5rem;padding:0;list-style:none}
.counts button{border:1px solid var(--line);background:#fff;border-radius:4px;padding:.25rem .55rem;cursor:pointer;font:inherit}
.counts button[aria-pressed=true]{background:var(--infobg);border-color:var(--info);font-weight:600}
.counts b{font-size:1.05rem;margin-right:.25rem}
form.filters{display:flex;flex-wrap:wrap;gap:.4rem .8rem;align-items:end;margin-bottom:.5rem}
label{display:inline-flex;flex-direction:column;font-size:12px;color:var(--muted);gap:.1rem}
input,select,button{font:inherit} input,select{padding:.2rem .3rem;border:1px solid #aab3c0;border-radius:3px;color:var(--fg);background:#fff}
input.wide{min-width:16rem}
button{padding:.2rem .55rem;border:1px solid #7d8796;border-radius:3px;background:#f2f4f7;cursor:pointer}
button.act{border-color:var(--info);color:var(--info);background:#fff} button:disabled{opacity:.5;cursor:default}
table{border-collapse:collapse;width:100%} th,td{border-bottom:1px solid var(--line);padding:.3rem .35rem;text-align:left;vertical-align:top}
th{font-size:12px;color:var(--muted);font-weight:600} td.at,.mono{font-family:ui-monospace,monospace;font-size:12px;white-space:nowrap}
.st{white-space:nowrap;font-weight:600;padding:0 .3rem;border-radius:3px}
.st-Running{color:var(--ok)} .st-Error{color:var(--bad);background:var(--badbg)} .st-Stopped{color:var(--warn);background:var(--warnbg)}
.flag{display:inline-block;margin:0 .3rem .15rem 0;padding:0 .35rem;border-radius:3px;border:1px solid var(--line);font-size:12px;white-space:nowrap}
.flag.quarantined,.flag.bad{background:var(--badbg);color:var(--bad);border-color:#f2b8b5} .flag.backoff{background:var(--warnbg);color:var(--warn)} .flag.acting{background:var(--infobg);color:var(--info)} .flag.silenced{background:#eee;color:#333}
.pager{display:flex;flex-wrap:wrap;gap:.4rem .6rem;align-items:center;margin-top:.4rem}
.health{display:flex;flex-wrap:wrap;gap:.35rem;list-style:none;margin:0;padding:0}
.health li{border:1px solid var(--line);border-radius:4px;padding:.15rem .45rem;background:#fff}
.health li.ok{border-color:#9fd3ae} .health li.bad{border-color:#f2b8b5;background:var(--badbg)}
ol.incidents{list-style:none;margin:0;padding:0} ol.incidents li{border-bottom:1px solid var(--line);padding:.35rem 0}
ol.approvals{list-style:none;margin:0;padding:0} ol.approvals li{border-bottom:1px solid var(--line);padding:.35rem 0} ol.approvals p{margin:.1rem 0;overflow-wrap:anywhere} ol.approvals li.focused{outline:2px solid #1a5fb4;outline-offset:2px;background:#eef4fc} #approvals h3{font-size:13px;margin:.4rem 0 .1rem}
.story{margin:.1rem 0;overflow-wrap:anywhere} .triage p{margin:.1rem 0} .triage ul.notes{margin:.1rem 0 .2rem 1rem;padding:0;overflow-wrap:anywhere} ol.incidents .triage ul.notes li{border:0;padding:0} #confirm-extra label{display:block} #confirm-extra textarea,#confirm-extra input{display:block;width:100%;box-sizing:border-box}
.kind{font-weight:600;white-space:nowrap}
.plots{display:grid;gap:.8rem;grid-template-columns:repeat(auto-fit,minmax(280px,1fr))} .plots figure{margin:0} .plots figure:first-child{grid-column:1/-1}
td{overflow-wrap:break-word} #fleet-table,#dlq-body,.trail{overflow-x:auto} td[data-label=opt-in],td[data-label=actions],td[data-label=type]{white-space:nowrap;overflow-wrap:normal}
#fleet-table td.at,#fleet-table .flag{white-space:normal} #fleet-table td[data-label=actions]{white-space:normal;min-width:4.6rem} #fleet-table td[data-label=actions] button{margin:0 0 .2rem}
svg{width:100%;height:auto;font:11px system-ui,sans-serif} svg .i{fill:#c0392b} svg .r{fill:#2e7d4f} svg .h{fill:#1d4f91} svg .k{fill:#8a8f98} svg text{fill:#333} svg line{stroke:#aab}
output{display:block;min-height:1.2em;margin-top:.3rem}
@media(max-width:760px){
 main{padding:.5rem} table.cards thead{position:absolute;left:-9999px}
 table.cards tr{display:block;border:1px solid var(--line);border-radius:5px;margin-bottom:.5rem;padding:.2rem .4rem}
 table.cards td{display:flex;gap:.6rem;border:0;padding:.15rem 0} table.cards td::before{content:attr(data-label);min-width:5.5rem;color:var(--muted);font-size:12px}
 input.wide{min-width:0;width:100%} form.filters label{flex:1 1 40%}
 td.at,.mono{white-space:normal} code,table.cards td{overflow-wrap:anywhere}
 #operator{order:-1} #fleet-table table.cards tr{display:flex;flex-direction:column} #fleet-table td[data-label=actions]{order:-1;white-space:normal}
}
`;
