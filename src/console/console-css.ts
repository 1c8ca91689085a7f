/** The console's stylesheet: readable from phone width to 1280 px and beyond, visible focus for keyboard use. */
export const CONSOLE_CSS = `
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,sans-serif;color:#1b1f24;background:#f6f7f9}
header{display:flex;flex-wrap:wrap;justify-content:space-between;align-items:center;gap:.5rem;padding:.6rem 1rem;background:#1b2a41;color:#fff}
header a{color:#fff;text-decoration:none;margin-right:1rem}
header nav{display:flex;align-items:center}
main{max-width:1280px;margin:0 auto;padding:1rem}
a:focus,button:focus,input:focus,select:focus,summary:focus{outline:3px solid #f0a500;outline-offset:2px}
button{font:inherit;padding:.3rem .8rem;border:1px solid #1b2a41;border-radius:4px;background:#fff;cursor:pointer}
button.danger{border-color:#b00020;color:#b00020}
.login{max-width:24rem;margin-top:10vh}
.login form{display:flex;flex-direction:column;gap:.6rem}
.login input{font:inherit;padding:.5rem}
textarea{max-width:100%}
.error{color:#b00020}
.filters{display:flex;flex-wrap:wrap;gap:.6rem;align-items:end;margin-bottom:.8rem}
.filters label{display:flex;flex-direction:column;font-size:.85rem}
.filters input,.filters select{font:inherit;padding:.3rem}
.table-wrap{overflow-x:auto}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{padding:.35rem .5rem;border-bottom:1px solid #e3e6ea;text-align:left;white-space:nowrap}
td.key{white-space:normal;word-break:break-all}
.bar{display:flex;width:10rem;max-width:40vw;height:.8rem;background:#e3e6ea;border-radius:3px;overflow:hidden}
.bar span{display:block;height:100%}
.p-system{background:#5470c6}.p-workspace{background:#91cc75}.p-tools{background:#fac858}.p-history{background:#ee6666}.p-used{background:#5470c6}
.pager{display:flex;gap:.6rem;align-items:center;margin:.8rem 0}
.entry{background:#fff;border:1px solid #e3e6ea;border-radius:4px;padding:.5rem .7rem;margin:.4rem 0}
.entry .meta{font-size:.8rem;color:#5a6470}
.entry pre,.summary{white-space:pre-wrap;word-break:break-word;margin:.3rem 0}
.compaction{background:#fff;border-left:4px solid #5470c6;padding:.5rem .7rem;margin:.6rem 0}
.compaction.failed{border-left-color:#b00020}
.approval{background:#fff;border-left:4px solid #e6a700;padding:.5rem .7rem;margin:.6rem 0}
.approval .arguments{white-space:pre-wrap;word-break:break-word;margin:.3rem 0;max-height:12rem;overflow:auto}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(300px,1fr));gap:1rem}
.charts canvas{background:#fff;max-width:100%}
@media (max-width:600px){th.wide,td.wide{display:none}.bar{width:6rem}}
`;
