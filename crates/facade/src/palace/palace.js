// The memory palace's views. Everything shown comes from the JSON document
// in #palace-data and reaches the page as text nodes: no innerHTML, no
// outerHTML, no insertAdjacentHTML, no document.write, no eval. Links are
// in-page (#…) or file:// links under the workspace root, checked by
// safeHref before any href is set.
'use strict';
(function () {
  var PAGE = 200;            // at most this many items rendered per page
  var TEXT_LIMIT = 20000;    // characters of one paragraph or record shown at first
  var LIST_TEXT_LIMIT = 600; // characters of a record in a list

  var D = JSON.parse(document.getElementById('palace-data').textContent);
  var ROOT_URL = String(D.root_url || '');

  // ---------------------------------------------------------------- DOM helpers

  function safeHref(href) {
    if (typeof href !== 'string') return null;
    if (href.charAt(0) === '#') return href;
    if (ROOT_URL.indexOf('file:///') === 0 && href.indexOf(ROOT_URL) === 0) return href;
    return null;
  }

  var ATTRS = {
    id: 1, title: 1, type: 1, placeholder: 1, value: 1, lang: 1, dir: 1, role: 1,
    'aria-label': 1, 'aria-current': 1, name: 1, colspan: 1, spellcheck: 1, autocomplete: 1
  };

  function append(el, kid) {
    if (kid === null || kid === undefined || kid === false) return;
    if (Array.isArray(kid)) {
      for (var i = 0; i < kid.length; i++) append(el, kid[i]);
    } else if (typeof kid === 'string' || typeof kid === 'number') {
      el.appendChild(document.createTextNode(String(kid)));
    } else {
      el.appendChild(kid);
    }
  }

  function setAttrs(el, attrs, svg) {
    if (!attrs) return;
    Object.keys(attrs).forEach(function (k) {
      var v = attrs[k];
      if (v === null || v === undefined || v === false) return;
      if (k === 'class') {
        el.setAttribute('class', String(v));
      } else if (k === 'href') {
        var safe = safeHref(v);
        if (safe !== null) el.setAttribute('href', safe);
      } else if (k === 'onclick') {
        el.addEventListener('click', v);
      } else if (k.indexOf('data-') === 0 || ATTRS[k] || (svg && SVG_ATTRS[k])) {
        el.setAttribute(k, String(v));
      } else {
        throw new Error('attribute not allowed: ' + k);
      }
    });
  }

  function h(tag, attrs) {
    var el = document.createElement(tag);
    setAttrs(el, attrs, false);
    for (var i = 2; i < arguments.length; i++) append(el, arguments[i]);
    return el;
  }

  var SVG_NS = 'http://www.w3.org/2000/svg';
  var SVG_ATTRS = {
    viewBox: 1, width: 1, height: 1, x: 1, y: 1, x1: 1, y1: 1, x2: 1, y2: 1, cx: 1, cy: 1, r: 1,
    'text-anchor': 1, 'marker-end': 1, refX: 1, refY: 1, markerWidth: 1, markerHeight: 1,
    orient: 1, d: 1, preserveAspectRatio: 1, tabindex: 1
  };

  function svg(tag, attrs) {
    var el = document.createElementNS(SVG_NS, tag);
    setAttrs(el, attrs, true);
    for (var i = 2; i < arguments.length; i++) append(el, arguments[i]);
    return el;
  }

  function badge(text, cls) {
    return h('span', { class: 'badge ' + (cls || '') }, text);
  }

  // A long string: the first `limit` characters, and a button for the rest.
  function longText(str, limit, tag, cls) {
    var el = h(tag || 'span', { class: cls || null });
    if (str.length <= limit) {
      el.textContent = str;
      return el;
    }
    el.textContent = str.slice(0, limit);
    var more = h('button', {
      class: 'more', type: 'button',
      onclick: function () { el.textContent = str; }
    }, '… show all ' + str.length.toLocaleString('en') + ' characters');
    el.appendChild(more);
    return el;
  }

  // Invisible characters that reorder the text around them (bidi
  // embeddings, overrides, isolates, marks). Text shows them verbatim,
  // each run isolated by the style sheet, and says they are there.
  var DIRECTION_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;

  function directionBadge(text) {
    return DIRECTION_CONTROLS.test(text) ? badge('holds invisible direction controls', 'warn') : null;
  }

  // Said after a list cut at PAGE items.
  function moreNote(total, where) {
    return total > PAGE ? h('p', { class: 'hint' }, '… and ' + fmt(total - PAGE) + ' more' + (where ? ' ' + where : '') + '.') : null;
  }

  function fmt(n) {
    return Number(n).toLocaleString('en');
  }

  // ---------------------------------------------------------------- routing

  function params() {
    return new URLSearchParams(location.hash.replace(/^#/, ''));
  }

  function route(obj) {
    var p = new URLSearchParams();
    Object.keys(obj).forEach(function (k) {
      if (obj[k] !== null && obj[k] !== undefined && obj[k] !== '') p.set(k, String(obj[k]));
    });
    return '#' + p.toString();
  }

  function intParam(p, name, dflt) {
    var v = parseInt(p.get(name), 10);
    return isFinite(v) && v >= 0 ? v : dflt;
  }

  // A pager over `total` items: returns [start, end) and the control.
  function pager(total, page, make) {
    var pages = Math.max(1, Math.ceil(total / PAGE));
    page = Math.min(Math.max(0, page), pages - 1);
    var start = page * PAGE;
    var end = Math.min(total, start + PAGE);
    var ctl = null;
    if (pages > 1) {
      ctl = h('div', { class: 'pager' },
        page > 0 ? h('a', { href: make(page - 1) }, '‹ previous') : h('span', { class: 'off' }, '‹ previous'),
        h('span', null, ' ' + fmt(start + 1) + '–' + fmt(end) + ' of ' + fmt(total) +
          ' (page ' + (page + 1) + ' of ' + pages + ') '),
        page + 1 < pages ? h('a', { href: make(page + 1) }, 'next ›') : h('span', { class: 'off' }, 'next ›'));
    }
    return { start: start, end: end, page: page, control: ctl };
  }

  // ---------------------------------------------------------------- indexes

  var fileByPath = new Map();
  D.files.forEach(function (f, i) { fileByPath.set(f.path, i); });

  var blockById = new Map(); // id -> [block indexes]
  D.blocks.forEach(function (b, k) {
    if (b.id === null) return;
    var list = blockById.get(b.id);
    if (list) list.push(k); else blockById.set(b.id, [k]);
  });

  // The position of every block among its file's items.
  var itemOfBlock = new Array(D.blocks.length);
  D.files.forEach(function (f) {
    f.items.forEach(function (item, i) {
      if (item.block !== undefined) itemOfBlock[item.block] = i;
    });
  });

  function fileOf(k) { return D.files[D.blocks[k].file]; }

  function blockRoute(k, extra) {
    var b = D.blocks[k];
    var r = { topic: fileOf(k).path };
    if (b.id !== null) r.block = b.id; else r.b = k;
    if (extra) Object.keys(extra).forEach(function (x) { r[x] = extra[x]; });
    return route(r);
  }

  function blockText(k) {
    var parts = D.blocks[k].parts;
    var s = '';
    for (var i = 0; i < parts.length; i++) {
      var p = parts[i];
      if (typeof p === 'string') s += p;
      else if (p.link !== undefined) s += p.link;
    }
    return s;
  }

  function fileTitle(f) {
    return f.title || f.path.replace(/^topics\//, '');
  }

  // ---------------------------------------------------------------- pieces

  function speakerEl(r) {
    return h('span', { class: 'speaker' }, h('bdi', null, r.attribution));
  }

  function trustBadges(r) {
    return [
      r.speaker_trusted
        ? badge('trusted speaker', 'ok')
        : badge(r.speaker_label !== null ? 'untrusted speaker hint' : 'no speaker identity', 'warn'),
      r.trust === 'pending' ? badge('pending source', 'pending') : null,
      r.promoted ? badge('promoted', 'ok') : null,
      r.legacy ? badge('legacy file', 'warn') : null
    ];
  }

  function recordCard(ri, limit) {
    var r = D.records[ri];
    var cited = r.cited_by.slice(0, 10).map(function (k) {
      var b = D.blocks[k];
      return h('a', { href: blockRoute(k) }, b.id !== null ? '^' + b.id : fileOf(k).path + ':' + b.line);
    });
    return h('article', {
      class: 'record' + (r.trust === 'pending' ? ' pending' : ''),
      'data-source-id': r.source_id,
      'data-speaker-trusted': r.speaker_trusted ? 'true' : 'false'
    },
    h('div', { class: 'record-head' },
      speakerEl(r), ' ',
      h('span', { class: 'ts' }, r.timestamp), ' ',
      h('span', { class: 'role' }, r.role), ' ',
      trustBadges(r), ' ', directionBadge(r.content)),
    longText(r.content, limit, 'pre', 'content'),
    h('div', { class: 'record-foot' },
      h('span', { class: 'sid' }, r.source_id !== null ? r.source_id : '(no source id)'), ' · ',
      h('a', { href: r.url, class: 'archive' }, 'archive: ' + r.path + (r.anchor ? '#' + r.anchor : '')),
      r.cited_by.length ? [' · cited by ', join(cited, ', '),
        r.cited_by.length > 10 ? ' and ' + (r.cited_by.length - 10) + ' more' : ''] : ' · cited by no block'));
  }

  function join(nodes, sep) {
    var out = [];
    nodes.forEach(function (n, i) { if (i) out.push(sep); out.push(n); });
    return out;
  }

  // A block's text: text parts as text, citations and links as elements.
  function partsEl(k, limit) {
    var b = D.blocks[k];
    var el = h('div', { class: 'block-text' });
    var left = limit;
    for (var i = 0; i < b.parts.length; i++) {
      var p = b.parts[i];
      if (left <= 0) {
        el.appendChild(h('button', {
          class: 'more', type: 'button',
          onclick: function () { el.replaceWith(partsEl(k, Infinity)); }
        }, '… show the whole paragraph (' + fmt(blockText(k).length) + ' characters)'));
        break;
      }
      if (typeof p === 'string') {
        var shown = p.length > left ? p.slice(0, left) : p;
        el.appendChild(document.createTextNode(shown));
        left -= shown.length;
      } else if (p.cite !== undefined) {
        var cls = 'cite';
        p.sources.forEach(function (s) { if (s.status !== 'trusted') cls += ' ' + s.status; });
        if (p.problem) cls += ' unknown';
        el.appendChild(h('a', {
          class: cls, href: blockRoute(k, { cite: p.n }),
          title: p.cite + (p.time ? ' · ' + p.time : '') + (p.problem ? ' · ' + p.problem : '')
        }, '[' + p.n + ']'));
      } else if (p.link !== undefined) {
        var target = D.files[p.file].path;
        var href = p.block !== null ? route({ topic: target, block: p.block }) : route({ topic: target });
        el.appendChild(h('a', { class: 'xref', href: href, title: target + (p.block !== null ? '#^' + p.block : '') }, p.link));
        left -= p.link.length;
      }
    }
    return el;
  }

  function blockEl(k, selected, limit) {
    var b = D.blocks[k];
    var f = fileOf(k);
    return h('div', {
      class: 'block' + (b.pending ? ' pending' : '') + (b.valid ? '' : ' invalid') + (selected ? ' selected' : ''),
      id: 'block-' + k
    },
    h('div', { class: 'block-meta' },
      b.id !== null ? h('a', { class: 'block-id', href: blockRoute(k) }, '^' + b.id) : badge('no block id', 'bad'),
      ' ', h('span', { class: 'where' }, f.path + ':' + b.line),
      b.pending ? [' ', badge('pending', 'pending')] : null,
      b.valid ? null : [' ', badge('does not validate', 'bad')],
      b.times.length ? [' ', h('span', { class: 'times' }, b.times.join(', '))] : null,
      b.commits.length ? [' ', h('a', { class: 'commits', href: blockRoute(k), title: 'the commits that touched it' },
        fmt(b.commits.length) + (b.commits.length === 1 ? ' commit' : ' commits'))] : null,
      ' ', directionBadge(blockText(k))),
    partsEl(k, limit === undefined ? TEXT_LIMIT : limit));
  }

  function evidenceEl(k, n) {
    var b = D.blocks[k];
    var box = h('div', { class: 'evidence-body' });
    var cites = [];
    var seen = {};
    b.parts.forEach(function (p) {
      if (p.cite !== undefined && !seen[p.n]) { seen[p.n] = true; cites.push(p); }
    });
    box.appendChild(h('h3', null, 'Evidence for ', b.id !== null ? '^' + b.id : 'the block at line ' + b.line));
    cites.forEach(function (p) {
      if (n !== null && p.n !== n) return;
      var sec = h('section', { class: 'citation', 'data-cite': p.n },
        h('div', { class: 'cite-head' },
          h('a', { href: blockRoute(k, { cite: p.n }) }, '[' + p.n + ']'), ' ',
          h('code', null, p.cite),
          p.time ? [' · Time ', h('span', { class: 'ts' }, p.time)] : null,
          p.problem ? [' ', badge(p.problem, 'bad')] : null));
      p.sources.forEach(function (s) {
        if (s.record !== null) {
          sec.appendChild(recordCard(s.record, TEXT_LIMIT));
        } else {
          sec.appendChild(h('div', { class: 'record missing' },
            h('code', null, s.id), ' ', badge(s.status === 'unknown' ? 'not an archived record there' : s.status, 'bad')));
        }
      });
      box.appendChild(sec);
    });
    if (n !== null && cites.length > 1) {
      box.appendChild(h('p', null, h('a', { href: blockRoute(k, { cite: 'all' }) }, 'show every citation of this block')));
    }
    if (!cites.length) box.appendChild(h('p', { class: 'hint' }, 'This block cites no evidence.'));
    return box;
  }

  // The commits that added, changed or removed block `k`, newest first.
  function blockHistoryEl(k) {
    var b = D.blocks[k];
    var box = h('section', { class: 'block-history' },
      h('h3', null, 'History of ', b.id !== null ? '^' + b.id : 'the block at line ' + b.line));
    if (b.id === null) {
      box.appendChild(h('p', { class: 'hint' }, 'A block without an id cannot be followed through the history.'));
      return box;
    }
    if (!b.commits.length) {
      box.appendChild(h('p', { class: 'hint' }, D.history.length
        ? 'No commit shown in the History view touched this block' +
          (D.history_truncated ? ' (only the newest ' + fmt(D.history.length) + ' are read).' : '.')
        : 'The workspace keeps no history yet.'));
      return box;
    }
    var list = h('ul', { class: 'commits' });
    b.commits.slice(0, PAGE).forEach(function (c) {
      var e = D.history[c];
      list.appendChild(h('li', null,
        h('a', { href: commitRoute(c), title: String(e.commit || '') }, h('code', null, shortCommit(e.commit))),
        ' ', h('span', { class: 'ts' }, String(e.time || '')),
        ' ', h('bdi', null, String(e.writer || '')),
        ' · ', h('bdi', null, String(e.message || ''))));
    });
    box.appendChild(list);
    append(box, moreNote(b.commits.length, 'commits'));
    return box;
  }

  // ---------------------------------------------------------------- views

  function selectedBlock(p, fi) {
    var byIndex = p.get('b');
    if (byIndex !== null) {
      var k = parseInt(byIndex, 10);
      return isFinite(k) && k >= 0 && k < D.blocks.length ? k : null;
    }
    var id = p.get('block');
    if (id === null) return null;
    var list = blockById.get(id) || [];
    for (var i = 0; i < list.length; i++) if (fi === null || D.blocks[list[i]].file === fi) return list[i];
    return list.length ? list[0] : null;
  }

  function treeEl(current, page) {
    var pg = pager(D.files.length, page, function (x) {
      return route({ topic: current !== null ? D.files[current].path : null, tpage: x });
    });
    var list = h('ul', { class: 'tree-list' });
    var lastDir = null;
    for (var i = pg.start; i < pg.end; i++) {
      var f = D.files[i];
      var slash = f.path.lastIndexOf('/');
      var dir = f.path.slice(0, slash);
      if (dir !== lastDir) {
        list.appendChild(h('li', { class: 'dir' }, dir + '/'));
        lastDir = dir;
      }
      list.appendChild(h('li', { class: 'file' + (i === current ? ' current' : '') },
        h('a', { href: route({ topic: f.path, tpage: pg.page }), title: f.path }, f.path.slice(slash + 1)),
        f.kind ? [' ', badge(f.kind, 'kind')] : null,
        ' ', h('span', { class: 'count' }, f.blocks + (f.pending ? ' · ' + f.pending + ' pending' : '')),
        f.diagnostics.length ? [' ', badge(f.diagnostics.length + ' problems', 'bad')] : null));
    }
    return h('nav', { class: 'tree', 'aria-label': 'topic files' },
      h('h2', null, 'Topics (' + fmt(D.files.length) + ')'), pg.control, list);
  }

  function fileEl(fi, p, selected) {
    var f = D.files[fi];
    var defaultPage = selected !== null ? Math.floor(itemOfBlock[selected] / PAGE) : 0;
    var pg = pager(f.items.length, intParam(p, 'page', defaultPage), function (x) {
      return route({ topic: f.path, page: x, tpage: p.get('tpage') });
    });
    var sec = h('section', { class: 'file-view' },
      h('h2', null, fileTitle(f)),
      h('div', { class: 'file-meta' },
        h('a', { href: f.url }, f.path),
        f.kind ? [' ', badge(f.kind, 'kind')] : null,
        ' · ' + fmt(f.blocks) + ' blocks',
        f.pending ? [' · ', badge(f.pending + ' pending', 'pending')] : null),
      f.description ? h('p', { class: 'description' }, f.description) : null,
      f.aliases.length ? h('p', { class: 'aliases' }, 'Also known as: ',
        join(f.aliases.map(function (a) { return h('bdi', null, a); }), ', ')) : null);
    if (f.diagnostics.length) {
      var dl = h('ul', { class: 'diagnostics' });
      f.diagnostics.slice(0, PAGE).forEach(function (d) {
        var x = D.diagnostics[d];
        dl.appendChild(h('li', null, h('code', null, x.code), ' line ' + x.line + ': ', x.message));
      });
      sec.appendChild(h('details', { class: 'problems' },
        h('summary', null, f.diagnostics.length + ' problem(s) in this file'), dl,
        moreNote(f.diagnostics.length, '(`scriptorium topic check` lists them all)')));
    }
    append(sec, pg.control);
    for (var i = pg.start; i < pg.end; i++) {
      var item = f.items[i];
      if (item.heading !== undefined) {
        var level = Math.min(6, Math.max(3, item.level + 2));
        sec.appendChild(h('h' + level, { class: 'heading' }, item.heading));
      } else {
        sec.appendChild(blockEl(item.block, item.block === selected));
      }
    }
    if (!f.items.length) sec.appendChild(h('p', { class: 'hint' }, 'This file holds no paragraphs.'));
    append(sec, pg.control && pg.control.cloneNode(true));
    return sec;
  }

  function viewTopics(p) {
    if (!D.files.length) {
      return h('div', { class: 'empty' }, h('h2', null, 'No topic files yet'),
        h('p', null, fmt(D.counts.records) + ' archived records; nothing has been written to topics/.'));
    }
    var topic = p.get('topic');
    var fi = topic !== null && fileByPath.has(topic) ? fileByPath.get(topic) : null;
    var selected = selectedBlock(p, fi);
    if (fi === null) fi = selected !== null ? D.blocks[selected].file : 0;
    var citeParam = p.get('cite');
    var cite = citeParam === null || citeParam === 'all' ? null : parseInt(citeParam, 10);
    var aside = h('aside', { class: 'evidence', 'aria-label': 'evidence' });
    if (selected !== null) {
      aside.appendChild(evidenceEl(selected, cite));
      aside.appendChild(blockHistoryEl(selected));
    } else {
      aside.appendChild(h('p', { class: 'hint' },
        'Click a citation such as [1] to see the archived messages it cites, verbatim, with who said them.'));
    }
    var defaultTreePage = Math.floor(fi / PAGE);
    return h('div', { class: 'topics' },
      treeEl(fi, intParam(p, 'tpage', defaultTreePage)),
      fileEl(fi, p, selected),
      aside);
  }

  function viewPeople(p) {
    var people = D.people;
    var pg = pager(people.length, intParam(p, 'page', 0), function (x) {
      return route({ view: 'people', page: x, spage: p.get('spage') });
    });
    var sec = h('section', { class: 'people' }, h('h2', null, 'People (' + fmt(people.length) + ' person files)'), pg.control);
    if (!people.length) sec.appendChild(h('p', { class: 'hint' }, 'No topic file declares kind: person.'));
    for (var i = pg.start; i < pg.end; i++) {
      var person = people[i];
      var f = D.files[person.file];
      var speakers = h('ul', { class: 'speakers' });
      person.speakers.forEach(function (s) {
        speakers.appendChild(h('li', null, h('bdi', { class: 'speaker' }, s.attribution), ' ',
          s.trusted ? badge('trusted', 'ok') : badge('untrusted', 'warn'),
          ' · ' + fmt(s.records) + ' cited record' + (s.records === 1 ? '' : 's')));
      });
      sec.appendChild(h('article', { class: 'person' },
        h('h3', null, h('a', { href: route({ topic: f.path }) }, fileTitle(f))),
        h('div', { class: 'file-meta' }, f.path, ' · ' + fmt(f.blocks) + ' blocks'),
        f.description ? h('p', { class: 'description' }, f.description) : null,
        h('p', { class: 'aliases' }, 'Aliases: ',
          person.aliases.length ? join(person.aliases.map(function (a) { return h('bdi', null, a); }), ', ') : 'none'),
        h('div', null, 'Speakers of the records its paragraphs cite:'),
        person.speakers.length ? speakers : h('p', { class: 'hint' }, 'none')));
    }
    var spg = pager(D.speakers.length, intParam(p, 'spage', 0), function (x) {
      return route({ view: 'people', page: p.get('page'), spage: x });
    });
    var table = h('table', { class: 'grid' },
      h('thead', null, h('tr', null, h('th', null, 'speaker'), h('th', null, 'id'), h('th', null, 'identity'),
        h('th', null, 'records'), h('th', null, 'pending'), h('th', null, 'cited'))));
    var body = h('tbody');
    for (var j = spg.start; j < spg.end; j++) {
      var s = D.speakers[j];
      body.appendChild(h('tr', null,
        h('td', null, h('bdi', { class: 'speaker' }, s.attribution)),
        h('td', null, s.id !== null ? h('code', null, s.id) : ''),
        h('td', null, s.trusted ? badge('trusted', 'ok') : badge('untrusted hint', 'warn')),
        h('td', { class: 'num' }, fmt(s.records)),
        h('td', { class: 'num' }, fmt(s.pending)),
        h('td', { class: 'num' }, fmt(s.cited))));
    }
    table.appendChild(body);
    sec.appendChild(h('h2', null, 'Speakers in the archive (' + fmt(D.speakers.length) + ')'));
    append(sec, spg.control);
    sec.appendChild(table);
    return sec;
  }

  function viewSources(p) {
    var sec = h('section', { class: 'sources' });
    var c = D.counts;
    sec.appendChild(h('h2', null, 'Sources'));
    sec.appendChild(h('p', null, fmt(c.records) + ' archived records (' + fmt(c.pending_records) + ' pending, ' +
      fmt(c.legacy_records) + ' in legacy files); ' + fmt(c.records_embedded) +
      ' are in this page: every cited record and every pending one. The others are counted.'));
    var tpg = pager(D.threads.length, intParam(p, 'tpage', 0), function (x) {
      return route({ view: 'sources', tpage: x, page: p.get('page'), list: p.get('list') });
    });
    var table = h('table', { class: 'grid' }, h('thead', null, h('tr', null,
      h('th', null, 'archive file'), h('th', null, 'records'), h('th', null, 'pending'), h('th', null, 'in this page'))));
    var body = h('tbody');
    for (var i = tpg.start; i < tpg.end; i++) {
      var t = D.threads[i];
      body.appendChild(h('tr', null, h('td', null, h('a', { href: t.url }, t.path)),
        h('td', { class: 'num' }, fmt(t.records)), h('td', { class: 'num' }, fmt(t.pending)),
        h('td', { class: 'num' }, fmt(t.embedded))));
    }
    table.appendChild(body);
    sec.appendChild(h('h3', null, 'Archive files (' + fmt(D.threads.length) + ')'));
    append(sec, tpg.control);
    sec.appendChild(table);

    var list = p.get('list') === 'all' ? 'all' : 'pending';
    var chosen = [];
    D.records.forEach(function (r, ri) { if (list === 'all' || r.trust === 'pending') chosen.push(ri); });
    sec.appendChild(h('h3', null, list === 'pending' ? 'Pending records (' + fmt(chosen.length) + ')' :
      'Every record in this page (' + fmt(chosen.length) + ')'));
    sec.appendChild(h('p', null, list === 'pending'
      ? h('a', { href: route({ view: 'sources', list: 'all' }) }, 'show every record in this page')
      : h('a', { href: route({ view: 'sources' }) }, 'show the pending records only')));
    var pg = pager(chosen.length, intParam(p, 'page', 0), function (x) {
      return route({ view: 'sources', list: list, page: x, tpage: p.get('tpage') });
    });
    append(sec, pg.control);
    for (var j = pg.start; j < pg.end; j++) sec.appendChild(recordCard(chosen[j], LIST_TEXT_LIMIT));
    if (D.archive_problems.length) {
      var ul = h('ul', { class: 'diagnostics' });
      D.archive_problems.slice(0, PAGE).forEach(function (x) {
        ul.appendChild(h('li', null, x.path + ': byte ' + x.offset + ', line ' + x.line + ': ', x.reason));
      });
      sec.appendChild(h('h3', null, 'Archive files that do not parse to their end (' + D.archive_problems.length + ')'));
      sec.appendChild(ul);
      append(sec, moreNote(D.archive_problems.length, '(`scriptorium check` lists them all)'));
    }
    return sec;
  }

  function viewTimeline(p) {
    // Newest day first; a day's header and its blocks are entries.
    var entries = [];
    for (var d = D.timeline.length - 1; d >= 0; d--) {
      entries.push([d, -1]);
      var day = D.timeline[d];
      for (var j = 0; j < day.blocks.length; j++) entries.push([d, day.blocks[j]]);
    }
    var pg = pager(entries.length, intParam(p, 'page', 0), function (x) { return route({ view: 'timeline', page: x }); });
    var sec = h('section', { class: 'timeline' },
      h('h2', null, 'Timeline (' + fmt(D.timeline.length) + (D.timeline.length === 1 ? ' day)' : ' days)')), pg.control);
    if (!entries.length) sec.appendChild(h('p', { class: 'hint' }, 'Nothing dated yet.'));
    var list = null;
    for (var i = pg.start; i < pg.end; i++) {
      var e = entries[i];
      var dd = D.timeline[e[0]];
      if (e[1] < 0 || list === null) {
        sec.appendChild(h('h3', { class: 'day' }, dd.day, h('span', { class: 'count' },
          ' · ' + fmt(dd.blocks.length) + ' paragraph' + (dd.blocks.length === 1 ? '' : 's') + ' · ' +
          fmt(dd.records) + ' record' + (dd.records === 1 ? '' : 's') + ' archived')));
        list = h('ul', { class: 'day-list' });
        sec.appendChild(list);
        if (e[1] < 0) continue;
      }
      var k = e[1];
      var b = D.blocks[k];
      var text = blockText(k);
      list.appendChild(h('li', { class: b.pending ? 'pending' : null },
        h('a', { href: blockRoute(k) }, fileOf(k).path + (b.id !== null ? '#^' + b.id : '')), ' ',
        b.pending ? badge('pending', 'pending') : null, ' ',
        h('span', { class: 'excerpt' }, text.length > 300 ? text.slice(0, 300) + '…' : text)));
    }
    return sec;
  }

  // relations.json: node ids are `path` (a file) or `path#^id` (a block).
  var relIndex = null;
  function relations() {
    if (relIndex) return relIndex;
    var byFile = new Map();
    function fileOfNode(id) { var k = id.indexOf('#^'); return k < 0 ? id : id.slice(0, k); }
    function add(path, e) { var l = byFile.get(path); if (l) l.push(e); else byFile.set(path, [e]); }
    D.relations.edges.forEach(function (e, i) {
      var a = fileOfNode(e.from), b = fileOfNode(e.to);
      add(a, i);
      if (b !== a) add(b, i);
    });
    relIndex = { byFile: byFile, fileOfNode: fileOfNode };
    return relIndex;
  }

  function nodeRoute(id) {
    var k = id.indexOf('#^');
    return k < 0 ? route({ topic: id }) : route({ topic: id.slice(0, k), block: id.slice(k + 2) });
  }

  function nodeLabel(id) {
    var k = id.indexOf('#^');
    if (k >= 0) return '^' + id.slice(k + 2);
    return id.slice(id.lastIndexOf('/') + 1);
  }

  // A node of another file: its file's name and the block.
  function nodeText(id) {
    var k = id.indexOf('#^');
    var file = k < 0 ? id : id.slice(0, k);
    return file.slice(file.lastIndexOf('/') + 1) + (k < 0 ? '' : '#^' + id.slice(k + 2));
  }

  function shorten(t, n) {
    return t.length > n ? t.slice(0, n - 1) + '…' : t;
  }

  function viewRelations(p) {
    var rel = relations();
    var files = Array.from(rel.byFile.keys()).sort(function (a, b) {
      return rel.byFile.get(b).length - rel.byFile.get(a).length || (a < b ? -1 : a > b ? 1 : 0);
    });
    var sec = h('section', { class: 'relations' },
      h('h2', null, 'Relations (' + fmt(D.relations.nodes.length) + ' nodes, ' + fmt(D.relations.edges.length) + ' edges)'),
      h('p', { class: 'hint' }, 'From relations.json: topic files and eligible paragraphs, and the links between them. ' +
        'Choose a file to draw its neighbourhood.'));
    if (!files.length) {
      sec.appendChild(h('p', { class: 'hint' }, 'No paragraph links to another file or paragraph yet.'));
      return sec;
    }
    var focus = p.get('focus');
    if (focus === null || !rel.byFile.has(focus)) focus = files[0];
    var fpg = pager(files.length, intParam(p, 'fpage', Math.floor(files.indexOf(focus) / PAGE)), function (x) {
      return route({ view: 'relations', focus: focus, fpage: x });
    });
    var pick = h('ul', { class: 'tree-list' });
    for (var i = fpg.start; i < fpg.end; i++) {
      pick.appendChild(h('li', { class: 'file' + (files[i] === focus ? ' current' : '') },
        h('a', { href: route({ view: 'relations', focus: files[i], fpage: fpg.page }) }, files[i]),
        ' ', h('span', { class: 'count' }, rel.byFile.get(files[i]).length + ' edges')));
    }

    // The neighbourhood: the focus file, its linked paragraphs (inner
    // ring), and the other ends of their edges (outer ring).
    var edges = rel.byFile.get(focus);
    var inner = [], outer = [], seen = new Set([focus]);
    edges.forEach(function (ei) {
      var e = D.relations.edges[ei];
      [e.from, e.to].forEach(function (id) {
        if (seen.has(id)) return;
        seen.add(id);
        if (rel.fileOfNode(id) === focus) inner.push(id); else outer.push(id);
      });
    });
    var cap = PAGE - 1;
    var drawnInner = inner.slice(0, cap);
    var drawnOuter = outer.slice(0, Math.max(0, cap - drawnInner.length));
    var pos = new Map();
    pos.set(focus, [0, 0]);
    var angle = new Map();
    function place(id, a, radius) {
      angle.set(id, a);
      pos.set(id, [Math.round(radius * Math.cos(a)), Math.round(radius * Math.sin(a))]);
    }
    // The focus file's paragraphs evenly on the inner ring.
    drawnInner.forEach(function (id, j) {
      place(id, -Math.PI / 2 + (2 * Math.PI * (j + 0.5)) / drawnInner.length, 170);
    });
    // The other ends on the outer ring, each near the paragraphs it is
    // linked with, in that order, at least a slot apart.
    var wanted = new Map();
    drawnOuter.forEach(function (id) { wanted.set(id, [0, 0]); });
    edges.forEach(function (ei) {
      var e = D.relations.edges[ei];
      [[e.from, e.to], [e.to, e.from]].forEach(function (pair) {
        var w = wanted.get(pair[0]);
        var a = angle.get(pair[1]);
        if (w && a !== undefined) { w[0] += Math.cos(a); w[1] += Math.sin(a); }
      });
    });
    var outerOrder = drawnOuter.map(function (id, j) {
      var w = wanted.get(id);
      var a = w[0] || w[1] ? Math.atan2(w[1], w[0]) : -Math.PI / 2 + (2 * Math.PI * j) / drawnOuter.length;
      return [a, id];
    }).sort(function (x, y) { return x[0] - y[0]; });
    var step = (2 * Math.PI) / Math.max(outerOrder.length, 16);
    var last = -Infinity;
    outerOrder.forEach(function (x) {
      var a = Math.max(x[0], last + step);
      last = a;
      place(x[1], a, 360);
    });
    var g = svg('svg', { viewBox: '-480 -430 960 860', class: 'graph', role: 'img', 'aria-label': 'relations of ' + focus },
      svg('defs', null, svg('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 18, refY: 5, markerWidth: 6, markerHeight: 6, orient: 'auto' },
        svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'arrowhead' }))));
    // The focus file holds its paragraphs: faint lines, not edges.
    drawnInner.forEach(function (id) {
      var xy = pos.get(id);
      g.appendChild(svg('line', { x1: 0, y1: 0, x2: xy[0], y2: xy[1], class: 'holds' }));
    });
    var drawn = 0;
    edges.forEach(function (ei) {
      var e = D.relations.edges[ei];
      var a = pos.get(e.from), b = pos.get(e.to);
      if (!a || !b) return;
      drawn++;
      g.appendChild(svg('line', { x1: a[0], y1: a[1], x2: b[0], y2: b[1], class: 'edge', 'marker-end': 'url(#arrow)' }));
    });
    pos.forEach(function (xy, id) {
      var isFile = id.indexOf('#^') < 0;
      var node = svg('g', { class: 'node ' + (isFile ? 'file' : 'block') + (id === focus ? ' focus' : ''), tabindex: 0 },
        svg('title', null, id),
        svg('circle', { cx: xy[0], cy: xy[1], r: id === focus ? 16 : isFile ? 11 : 7 }),
        svg('text', { x: xy[0], y: xy[1] + (xy[1] >= 0 ? 24 : -14), 'text-anchor': 'middle' },
          id === focus ? nodeLabel(id) : shorten(rel.fileOfNode(id) === focus ? nodeLabel(id) : nodeText(id), 24)));
      var go = function () { location.hash = nodeRoute(id); };
      node.addEventListener('click', go);
      node.addEventListener('keydown', function (ev) { if (ev.key === 'Enter') go(); });
      g.appendChild(node);
    });
    var notDrawn = inner.length - drawnInner.length + outer.length - drawnOuter.length;

    var epg = pager(edges.length, intParam(p, 'page', 0), function (x) {
      return route({ view: 'relations', focus: focus, fpage: p.get('fpage'), page: x });
    });
    var elist = h('ul', { class: 'edges' });
    for (var j = epg.start; j < epg.end; j++) {
      var e = D.relations.edges[edges[j]];
      elist.appendChild(h('li', null, h('a', { href: nodeRoute(e.from) }, e.from), ' → ', h('a', { href: nodeRoute(e.to) }, e.to)));
    }
    sec.appendChild(h('div', { class: 'relations-body' },
      h('nav', { class: 'tree' }, h('h3', null, 'Files with links (' + fmt(files.length) + ')'), fpg.control, pick),
      h('div', { class: 'graph-box' },
        h('h3', null, focus),
        h('p', { class: 'count' }, fmt(pos.size) + ' nodes and ' + fmt(drawn) + ' edges drawn' +
          (notDrawn ? '; ' + fmt(notDrawn) + ' more nodes not drawn (listed below)' : '')),
        g,
        h('h3', null, 'Edges of this file (' + fmt(edges.length) + ')'), epg.control, elist)));
    return sec;
  }

  // A commit's id as a person reads it: its first 12 hex digits.
  function shortCommit(c) {
    return String(c || '').slice(0, 12);
  }

  // The history view's page that holds commit `k` (an index into D.history).
  function commitRoute(k) {
    return route({ view: 'history', page: Math.floor(k / PAGE) });
  }

  function historyRow(e, k) {
    var turns = Array.isArray(e.turns) ? e.turns : [];
    return h('tr', { id: 'commit-' + k },
      h('td', { class: 'nowrap' }, h('code', { title: String(e.commit || '') }, shortCommit(e.commit))),
      h('td', { class: 'ts nowrap' }, String(e.time || '')),
      h('td', { class: 'nowrap' }, h('bdi', null, String(e.writer || ''))),
      h('td', { class: 'nowrap' }, String(e.tier || '')),
      h('td', { class: 'nowrap' }, e.session ? h('bdi', null, String(e.session)) : ''),
      h('td', null, h('bdi', null, String(e.message || ''))),
      h('td', { class: 'nowrap', title: turns.length ? turns.slice(0, 20).join(', ') : null }, turns.length ? fmt(turns.length) : ''));
  }

  function historyHint() {
    var text = 'From the workspace\'s git history (its .git folder): one commit per installed transaction, ' +
      'and one per set of edits made outside Scriptorium.';
    if (D.history_truncated) {
      text += ' These are the newest ' + fmt(D.history.length) + ' commits; older ones are in the repository ' +
        '(scriptorium log lists them all).';
    }
    return h('p', { class: 'hint' }, text);
  }

  function viewHistory(p) {
    var sec = h('section', { class: 'history' });
    var hist = D.history;
    var pg = pager(hist.length, intParam(p, 'page', 0), function (x) {
      return route({ view: 'history', page: x, apage: p.get('apage') });
    });
    sec.appendChild(h('h2', null, 'Commits (' + fmt(hist.length) + (D.history_truncated ? ', the newest' : '') +
      ', newest first)'));
    sec.appendChild(historyHint());
    append(sec, pg.control);
    var table = h('table', { class: 'grid' }, h('thead', null, h('tr', null, h('th', null, 'commit'),
      h('th', null, 'time'), h('th', null, 'writer'), h('th', null, 'tier'), h('th', null, 'session'),
      h('th', null, 'message'), h('th', null, 'turns'))));
    var body = h('tbody');
    for (var i = pg.start; i < pg.end; i++) body.appendChild(historyRow(hist[i], i));
    table.appendChild(body);
    sec.appendChild(hist.length ? table : h('p', { class: 'hint' },
      'No commit yet: nothing has been installed, or the workspace keeps no history (memory.history = "off").'));

    var audit = D.audit.slice().reverse();
    var apg = pager(audit.length, intParam(p, 'apage', 0), function (x) {
      return route({ view: 'history', page: p.get('page'), apage: x });
    });
    sec.appendChild(h('h2', null, 'Promotions and owner actions (' + fmt(audit.length) + ')'));
    sec.appendChild(h('p', { class: 'hint' }, 'From .scriptorium/audit.jsonl: pending sources an owner vouched for.'));
    append(sec, apg.control);
    var at = h('table', { class: 'grid' }, h('thead', null, h('tr', null, h('th', null, 'time'), h('th', null, 'action'),
      h('th', null, 'by'), h('th', null, 'sources'))));
    var ab = h('tbody');
    for (var j = apg.start; j < apg.end; j++) {
      var x = audit[j];
      if (x.unreadable !== undefined) {
        ab.appendChild(h('tr', null, h('td', { colspan: 4 }, badge('unreadable line', 'bad'), ' ', h('code', null, String(x.unreadable)))));
        continue;
      }
      var sources = Array.isArray(x.sources) ? x.sources : [];
      ab.appendChild(h('tr', null, h('td', { class: 'ts nowrap' }, String(x.time || '')),
        h('td', { class: 'nowrap' }, String(x.action || '')), h('td', { class: 'nowrap' }, String(x.by || x.who || '')),
        h('td', null, join(sources.slice(0, 20).map(function (s) { return h('code', null, String(s)); }), ', '),
          sources.length > 20 ? ' and ' + (sources.length - 20) + ' more' : '')));
    }
    at.appendChild(ab);
    sec.appendChild(audit.length ? at : h('p', { class: 'hint' }, 'No promotions yet.'));
    return sec;
  }

  function viewCore() {
    var c = D.core;
    var sec = h('section', { class: 'core' }, h('h2', null, 'core.md'));
    if (c.path === null) {
      sec.appendChild(h('p', { class: 'hint' }, 'There is no topics/core.md: an agent is given no always-on memory.'));
      return sec;
    }
    var onDisk = {
      current: 'the core.md on disk is this render',
      stale: 'the core.md on disk differs from this render (it is rebuilt after the next transaction or by `scriptorium render`)',
      absent: 'nothing is eligible, so there is no core.md',
      'hand-written': 'the core.md on disk is hand-written (no derived marker)',
      blocked: 'core.md in the workspace is a symbolic link or not a regular file: it is left alone and the render cannot be written there'
    }[c.on_disk] || c.on_disk;
    sec.appendChild(h('p', { class: 'core-meta' },
      h('strong', null, fmt(c.tokens) + ' tokens'), ' of a budget of ' + fmt(c.budget) + ' (o200k_base) · ' +
      c.included.length + ' block(s) included · ' + c.omitted.length + ' left out for the budget · ' +
      c.ineligible.length + ' pending or invalid · ', onDisk));
    var fi = fileByPath.get(c.path);
    function byId(id) {
      var list = blockById.get(id) || [];
      for (var i = 0; i < list.length; i++) if (D.blocks[list[i]].file === fi) return list[i];
      return list.length ? list[0] : null;
    }
    sec.appendChild(h('h3', null, 'Included'));
    c.included.slice(0, PAGE).forEach(function (id) { var k = byId(id); if (k !== null) sec.appendChild(blockEl(k, false)); });
    append(sec, moreNote(c.included.length, 'in the rendered file below'));
    sec.appendChild(h('h3', null, 'Left out for the budget (' + c.omitted.length + ')'));
    if (!c.omitted.length) sec.appendChild(h('p', { class: 'hint' }, 'none'));
    c.omitted.slice(0, PAGE).forEach(function (id) { var k = byId(id); if (k !== null) sec.appendChild(blockEl(k, false, 600)); });
    append(sec, moreNote(c.omitted.length, 'in ' + c.path));
    if (c.ineligible.length) {
      sec.appendChild(h('h3', null, 'Pending or invalid, never eligible (' + c.ineligible.length + ')'));
      c.ineligible.slice(0, PAGE).forEach(function (k) { sec.appendChild(blockEl(k, false, 600)); });
      append(sec, moreNote(c.ineligible.length, 'in ' + c.path));
    }
    if (c.text !== null) {
      sec.appendChild(h('h3', null, 'The rendered file'));
      sec.appendChild(longText(c.text, TEXT_LIMIT, 'pre', 'content'));
    }
    return sec;
  }

  // The writer's health, as `scriptorium status` reports it.
  function viewHealth() {
    var x = D.health;
    var sec = h('section', { class: 'health' }, h('h2', null, 'Health'));
    var failing = x.failure_streak > 0;
    sec.appendChild(h('p', { class: 'health-state' },
      failing ? badge(fmt(x.failure_streak) + ' failed write(s) in a row', 'bad') : badge('writing', 'ok'), ' ',
      x.last_success !== null ? 'last success ' + x.last_success : 'no successful write yet'));
    var rows = [
      ['failure streak', fmt(x.failure_streak)],
      ['fingerprint', x.fingerprint !== null ? h('code', null, x.fingerprint) : '(none: no current failure)'],
      ['last success', x.last_success !== null ? x.last_success : '(none)']
    ];
    var f = x.last_failure;
    if (f) {
      rows.push(['last failure', [f.time, ' ', h('code', null, f.code), f.retryable ? ' (retryable)' : ' (not retryable)']]);
      rows.push(['reason', h('bdi', { class: 'reason' }, longText(f.reason, LIST_TEXT_LIMIT, 'span', 'content'))]);
      if (f.fingerprint !== x.fingerprint) rows.push(['its fingerprint', h('code', null, f.fingerprint)]);
    } else {
      rows.push(['last failure', '(none)']);
    }
    var body = h('tbody');
    rows.forEach(function (r) { body.appendChild(h('tr', null, h('th', null, r[0]), h('td', null, r[1]))); });
    sec.appendChild(h('table', { class: 'grid health-table' }, body));
    if (failing && x.remediation !== null) {
      sec.appendChild(h('h3', null, 'What to do'));
      sec.appendChild(h('p', { class: 'remediation' }, x.remediation));
    }
    return sec;
  }

  // Search: every whitespace-separated term, case-insensitive, must occur.
  var lowered = null;
  function searchIndex() {
    if (lowered) return lowered;
    lowered = {
      files: D.files.map(function (f) {
        return [f.path, f.title || '', f.description || '', f.aliases.join(' ')].join('\n').toLowerCase();
      }),
      blocks: D.blocks.map(function (b, k) { return (blockText(k) + '\n' + (b.id || '')).toLowerCase(); }),
      records: D.records.map(function (r) {
        return [r.attribution, r.speaker_label || '', r.source_id || '', r.content].join('\n').toLowerCase();
      })
    };
    return lowered;
  }

  function viewSearch(p) {
    var q = (p.get('q') || '').trim();
    var sec = h('section', { class: 'search' }, h('h2', null, 'Search'));
    var input = h('input', { type: 'search', name: 'q', value: q, placeholder: 'words from paragraphs, records, speakers, paths', 'aria-label': 'search' });
    var form = h('form', { class: 'search-form', role: 'search' }, input, h('button', { type: 'submit' }, 'Search'));
    form.addEventListener('submit', function (ev) { ev.preventDefault(); location.hash = route({ view: 'search', q: input.value }); });
    sec.appendChild(form);
    if (!q) {
      sec.appendChild(h('p', { class: 'hint' }, 'Searches the topic files, the paragraphs and the records in this page.'));
      return sec;
    }
    var terms = q.toLowerCase().split(/\s+/).filter(Boolean);
    function hit(s) { for (var i = 0; i < terms.length; i++) if (s.indexOf(terms[i]) < 0) return false; return true; }
    var idx = searchIndex();
    var results = [];
    idx.files.forEach(function (s, i) { if (hit(s)) results.push(['file', i]); });
    idx.blocks.forEach(function (s, i) { if (hit(s)) results.push(['block', i]); });
    idx.records.forEach(function (s, i) { if (hit(s)) results.push(['record', i]); });
    var pg = pager(results.length, intParam(p, 'page', 0), function (x) { return route({ view: 'search', q: q, page: x }); });
    sec.appendChild(h('p', { class: 'count' }, fmt(results.length) + ' result' + (results.length === 1 ? '' : 's')));
    append(sec, pg.control);
    for (var i = pg.start; i < pg.end; i++) {
      var r = results[i];
      if (r[0] === 'file') {
        var f = D.files[r[1]];
        sec.appendChild(h('div', { class: 'result' }, badge('topic file', 'kind'), ' ', h('a', { href: route({ topic: f.path }) }, f.path)));
      } else if (r[0] === 'block') {
        sec.appendChild(h('div', { class: 'result' }, badge('paragraph', 'kind'), ' ', blockEl(r[1], false, LIST_TEXT_LIMIT)));
      } else {
        sec.appendChild(h('div', { class: 'result' }, badge('record', 'kind'), ' ', recordCard(r[1], LIST_TEXT_LIMIT)));
      }
    }
    return sec;
  }

  var VIEWS = [
    ['topics', 'Topics', viewTopics],
    ['people', 'People', viewPeople],
    ['sources', 'Sources', viewSources],
    ['timeline', 'Timeline', viewTimeline],
    ['relations', 'Relations', viewRelations],
    ['history', 'History', viewHistory],
    ['core', 'Core', viewCore],
    ['health', 'Health', viewHealth],
    ['search', 'Search', viewSearch]
  ];

  // ---------------------------------------------------------------- frame

  var nav = h('nav', { class: 'views', 'aria-label': 'views' });
  var navLinks = {};
  VIEWS.forEach(function (v) {
    var a = h('a', { href: v[0] === 'topics' ? route({ view: 'topics' }) : route({ view: v[0] }) }, v[1]);
    navLinks[v[0]] = a;
    nav.appendChild(a);
  });
  var quick = h('input', { type: 'search', name: 'q', placeholder: 'search memory', 'aria-label': 'search memory' });
  var quickForm = h('form', { class: 'quick', role: 'search' }, quick);
  quickForm.addEventListener('submit', function (ev) {
    ev.preventDefault();
    location.hash = route({ view: 'search', q: quick.value });
  });
  var c = D.counts;
  var header = h('header', { class: 'top' },
    h('div', { class: 'row' },
      h('div', { class: 'brand' }, h('h1', null, 'Scriptorium palace'),
        h('a', { class: 'root', href: ROOT_URL, title: 'the workspace folder' }, D.root)),
      quickForm),
    h('div', { class: 'row' },
      nav,
      h('div', { class: 'stats' },
      fmt(c.topic_files) + ' topic files · ' + fmt(c.blocks) + ' paragraphs (' + fmt(c.pending_blocks) + ' pending) · ' +
      fmt(c.records) + ' records (' + fmt(c.pending_records) + ' pending, ' + fmt(c.records_embedded) + ' in this page) · ' +
      fmt(c.diagnostics) + ' problems · revision ', h('code', { title: D.revision }, String(D.revision).slice(0, 12)),
      D.health.failure_streak > 0 ? [' · ', h('a', { href: route({ view: 'health' }), class: 'health-alert' },
        badge('writer failing: ' + fmt(D.health.failure_streak) + ' in a row', 'bad'))] : null)));
  var main = h('main', { id: 'main' });
  document.body.appendChild(header);
  document.body.appendChild(main);

  function render() {
    var p = params();
    var name = p.get('view') || 'topics';
    var view = null;
    VIEWS.forEach(function (v) {
      if (v[0] === name) view = v;
      if (v[0] === name) navLinks[v[0]].setAttribute('aria-current', 'page');
      else navLinks[v[0]].removeAttribute('aria-current');
    });
    try {
      main.replaceChildren(view ? view[2](p) : h('p', { class: 'hint' }, 'There is no view called ', h('code', null, name), '.'));
      document.body.setAttribute('data-view', view ? name : 'unknown');
      document.body.setAttribute('data-state', 'ready');
      var sel = main.querySelector('.block.selected');
      window.scrollTo(0, 0);
      // The file's column scrolls on its own: bring the chosen paragraph
      // to its upper third.
      var box = main.querySelector('.file-view');
      if (sel && box) box.scrollTop = Math.max(0, sel.offsetTop - box.clientHeight / 3);
    } catch (err) {
      main.replaceChildren(h('div', { class: 'error' }, 'The palace could not draw this view: ', String(err && err.message || err)));
      document.body.setAttribute('data-state', 'error');
    }
  }

  window.addEventListener('hashchange', render);
  render();
})();
