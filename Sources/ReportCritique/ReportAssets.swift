internal import MuEvalWire
internal import WireProtocol

/// The report's stylesheet and script, written next to index.html. Plain CSS and ES5 JavaScript, no library:
/// the report must open from file:// in any browser, offline, and print.
enum ReportAssets {
    /// The timeline's class column, a colour per class, named from the one vocabulary (`EventClass`).
    private static let timelineClassRules = (EventClass.allCases.map { #"tr[data-class="\#($0.rawValue)"] td.class { color: \#(colour(of: $0)); }"# }
        + [#"tr[data-class="\#(ObserverNote.eventClass)"] td.class { font-weight: 600; }"#]).joined(separator: "\n")

    private static func colour(of eventClass: EventClass) -> String {
        switch eventClass {
        case .userInput: "#2f6fd0"
        case .userInterface: "#1e8449"
        case .deviceSensor: "#7d3c98"
        case .application: "#b9770e"
        case .custom: "#c0392b"
        }
    }

    static let css = #"""
        :root { --ink: #1d2330; --muted: #5f6b7a; --line: #d8dde5; --accent: #2f6fd0; --bad: #c0392b; --warn: #d68910; --bg: #f6f7f9; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
        header { padding: 1.2rem 2rem .6rem; background: #fff; border-bottom: 1px solid var(--line); position: sticky; top: 0; z-index: 2; }
        h1 { margin: 0; font-size: 1.5rem; }
        .generated { margin: .2rem 0 .5rem; color: var(--muted); font-size: .85rem; }
        nav a { margin-right: 1rem; color: var(--accent); text-decoration: none; font-weight: 600; }
        main { padding: 1rem 2rem 3rem; }
        .section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 1rem 1.4rem; margin: 1.2rem 0; }
        h2 { margin: 0 0 .8rem; font-size: 1.25rem; border-bottom: 2px solid var(--accent); display: inline-block; }
        h3.user { margin: 0 0 .5rem; color: var(--accent); }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
        td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
        .overview th { width: 14rem; color: var(--muted); font-weight: 600; }
        ul.plain { margin: .2rem 0 0; padding-left: 1.1rem; color: var(--muted); }
        .compare { display: grid; grid-template-columns: repeat(auto-fit, minmax(22rem, 1fr)); gap: 1.2rem; }
        .empty { color: var(--muted); font-style: italic; }
        .legend, .summary { color: var(--muted); }
        .barcell { width: 35%; }
        .bar { display: inline-block; height: .8rem; background: var(--accent); border-radius: 2px; vertical-align: middle; min-width: 1px; }
        .gallery { display: flex; flex-wrap: wrap; gap: 1rem; }
        figure { margin: 0; }
        figure.heatmap canvas { width: 240px; height: auto; border: 1px solid var(--line); display: block; }
        figcaption { font-size: .8rem; color: var(--muted); max-width: 240px; }
        .page-under { position: relative; display: block; width: 240px; overflow: hidden; outline: 1px solid var(--line); background: #fff; }
        .page-under iframe.page { position: absolute; left: 0; top: 0; border: 0; transform-origin: 0 0; pointer-events: none; background: #fff; }
        figure.heatmap .page-under canvas { position: relative; width: 100%; border: 0; }
        figure.shot .page-under { width: 120px; }
        ol.path { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .8rem; }
        ol.path li { display: flex; gap: .5rem; width: 15rem; border: 1px solid var(--line); border-radius: 6px; padding: .4rem; font-size: .85rem; }
        ol.path img { width: 64px; border: 1px solid var(--line); }
        .badge { display: inline-block; padding: 0 .4rem; border-radius: 3px; background: #e8eefb; color: var(--accent); font-size: .75rem; font-weight: 600; }
        .modal .badge { background: #fdf2e0; color: var(--warn); }
        .pop .badge, .dismiss .badge { background: #eee; color: var(--muted); }
        .stack, .time { color: var(--muted); font-size: .8rem; }
        ol.problems { list-style: none; padding: 0; }
        li.problem { display: flex; gap: 1rem; border-left: 4px solid var(--bad); padding: .5rem .8rem; margin: .6rem 0; background: #fdf6f5; break-inside: avoid; }
        li.problem.guideline { border-color: var(--warn); background: #fefaf2; }
        li.problem h4 { margin: 0; color: var(--bad); }
        li.problem.guideline h4 { color: var(--warn); }
        li.problem p { margin: .2rem 0; }
        .where { color: var(--muted); font-size: .85rem; }
        .rating { display: inline-block; padding: 0 .4rem; border-radius: 3px; font-size: .75rem; font-weight: 600; }
        .rating.good { background: #eaf6ee; color: #1e7b3a; }
        .rating.warning { background: #fdf2e0; color: var(--warn); }
        .rating.critical { background: #fbeceb; color: var(--bad); }
        ol.notes { list-style: none; padding: 0; }
        li.note { display: flex; gap: 1rem; border-left: 4px solid var(--accent); padding: .5rem .8rem; margin: .6rem 0; background: #f3f6fc; break-inside: avoid; }
        li.note[data-kind="problem"] { border-color: var(--bad); background: #fdf6f5; }
        li.note p { margin: .2rem 0; }
        li.note .text { white-space: pre-wrap; }
        figure.shot img { width: 120px; display: block; border: 1px solid var(--line); }
        .marked { position: relative; display: inline-block; }
        .mark { position: absolute; pointer-events: none; }
        .mark.box { border: 2px solid var(--bad); }
        .mark.dot { width: 10px; height: 10px; margin: -5px 0 0 -5px; border-radius: 50%; background: var(--bad); box-shadow: 0 0 0 3px rgba(192, 57, 43, .35); }
        .filters { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; margin-bottom: .6rem; }
        .filters input { width: 16rem; }
        #tl-count { color: var(--muted); }
        .timeline-body { display: flex; gap: 1rem; align-items: flex-start; }
        .timeline-rows { flex: 1; max-height: 70vh; overflow: auto; }
        .timeline-rows table { font-size: .82rem; }
        .timeline-rows tbody tr { cursor: pointer; }
        .timeline-rows tbody tr:hover, .timeline-rows tbody tr.selected { background: #e8eefb; }
        .timeline-rows td:nth-child(n+5) { word-break: break-word; }
        .timeline-shot { position: sticky; top: 7rem; width: 200px; }
        .timeline-shot img { width: 200px; border: 1px solid var(--line); }
        \#(timelineClassRules)
        svg.chart { display: block; max-width: 100%; height: auto; font-size: 12px; }
        svg.chart .bar { fill: var(--accent); }
        svg.chart .whisker { stroke: var(--ink); stroke-width: 1.5; }
        svg.chart .axis { stroke: var(--line); }
        svg.chart text { fill: var(--ink); }
        svg.chart text.muted { fill: var(--muted); }
        svg.chart .band { stroke: #fff; }
        svg.chart .score { fill: var(--ink); fill-opacity: .75; }
        svg.chart .mean { stroke: var(--bad); stroke-width: 2.5; }
        .wide { overflow-x: auto; }
        .charts { display: flex; flex-wrap: wrap; gap: 1.5rem; margin: .6rem 0 1.2rem; }
        .charts figure { width: 22rem; }
        h3.task { margin: 1.2rem 0 .3rem; }
        .verdict { font-weight: 600; }
        .verdict.improved { color: #1e8449; }
        .verdict.worse { color: var(--bad); }
        .verdict.unclear { color: var(--muted); }
        table.matrix td { text-align: center; white-space: nowrap; }
        table.matrix td.success { background: #eaf6ee; }
        table.matrix td.failure, table.matrix td.abandoned { background: #fbeceb; }
        table.matrix td.assisted { background: #fdf2e0; }
        .outcome { font-size: 1.1rem; }
        .overridden { color: var(--warn); font-weight: 700; cursor: help; }
        details.participant { margin: .6rem 0; }
        details.participant summary { cursor: pointer; font-weight: 600; }
        ul.sightings { margin: .3rem 0; padding-left: 1.1rem; font-size: .85rem; }
        @media print {
          header { position: static; } nav, .filters, #tl-more, .timeline-shot { display: none; }
          body, .section { background: #fff; } .section { border: none; padding: 0; break-inside: auto; }
          .timeline-rows { max-height: none; overflow: visible; }
          figure, li.step, tr { break-inside: avoid; }
        }
        """#

    static let javascript = #"""
        // muEval report: the interactive parts (timeline filters, heatmap canvases). What it has done is written
        // into data attributes, so that a headless browser's DOM dump shows it.
        (function () {
          'use strict';
          var errors = 0;
          function noteError() { errors += 1; document.body.setAttribute('data-errors', String(errors)); }
          // Capturing: failed images and scripts report here too, not only script errors.
          window.addEventListener('error', noteError, true);
          var consoleError = console.error;
          console.error = function () { noteError(); consoleError.apply(console, arguments); };

          function byId(id) { return document.getElementById(id); }
          function option(select, value) {
            var element = document.createElement('option');
            element.textContent = value;
            select.appendChild(element);
          }

          function setUpTimeline() {
            var root = byId('timeline-events');
            if (!root) { return; }
            // Enter in the search field filters; it never submits (no inline handler: the console serves
            // reports under a Content-Security-Policy without inline script).
            var form = root.querySelector('form.filters');
            if (form) { form.addEventListener('submit', function (event) { event.preventDefault(); }); }
            var data = JSON.parse(byId('timeline-data').textContent);
            var classSelect = byId('tl-class'), typeSelect = byId('tl-type'), userSelect = byId('tl-user');
            var search = byId('tl-search'), rows = byId('tl-rows'), more = byId('tl-more'), count = byId('tl-count');
            var shot = byId('tl-shot'), caption = byId('tl-shot-caption');
            var pageSize = 500, limit = pageSize, matches = [];
            var comparing = data.users.length > 1;
            // The classes come with the rows (the page is written as the journal is read).
            data.classes.forEach(function (name) { option(classSelect, name); });

            function fillTypes() {
              var chosen = typeSelect.value, classIndex = data.classes.indexOf(classSelect.value), seen = {}, types = [];
              data.rows.forEach(function (row) {
                if ((classIndex < 0 || row[2] === classIndex) && row[3] && !seen[row[3]]) { seen[row[3]] = true; types.push(row[3]); }
              });
              types.sort();
              while (typeSelect.options.length > 1) { typeSelect.remove(1); }
              types.forEach(function (type) { option(typeSelect, type); });
              typeSelect.value = seen[chosen] ? chosen : '';
            }

            function apply() {
              var classIndex = data.classes.indexOf(classSelect.value), type = typeSelect.value;
              var user = userSelect ? data.users.indexOf(userSelect.value) : -1;
              var words = search.value.toLowerCase().split(/\s+/).filter(function (word) { return word; });
              matches = data.rows.filter(function (row) {
                if (classIndex >= 0 && row[2] !== classIndex) { return false; }
                if (type && row[3] !== type) { return false; }
                if (user >= 0 && row[0] !== user) { return false; }
                if (!words.length) { return true; }
                var text = (data.classes[row[2]] + ' ' + row[3] + ' ' + row[4] + ' ' + row[5]).toLowerCase();
                return words.every(function (word) { return text.indexOf(word) >= 0; });
              });
              limit = pageSize;
              render();
            }

            function cell(tr, text, className) {
              var td = document.createElement('td');
              td.textContent = text;
              if (className) { td.className = className; }
              tr.appendChild(td);
            }

            function clock(seconds) {
              var minutes = Math.floor(seconds / 60), rest = (seconds - minutes * 60).toFixed(1);
              return minutes + ':' + (rest < 10 ? '0' : '') + rest;
            }

            function render() {
              var fragment = document.createDocumentFragment(), shown = {};
              var visible = matches.slice(0, limit);
              visible.forEach(function (row) {
                var tr = document.createElement('tr'), className = data.classes[row[2]];
                tr.setAttribute('data-class', className);
                tr.setAttribute('data-shot', row[6]);
                tr.setAttribute('data-t', String(row[1]));
                tr.setAttribute('data-user', String(row[0]));
                if (comparing) { cell(tr, data.users[row[0]]); }
                cell(tr, clock(row[1]), 'num');
                cell(tr, className, 'class');
                cell(tr, row[3]);
                cell(tr, row[4]);
                cell(tr, row[5]);
                fragment.appendChild(tr);
                shown[className] = true;
              });
              rows.textContent = '';
              rows.appendChild(fragment);
              more.hidden = matches.length <= limit;
              count.textContent = matches.length + ' of ' + data.rows.length + ' events';
              root.setAttribute('data-matches', String(matches.length));
              root.setAttribute('data-visible-rows', String(visible.length));
              root.setAttribute('data-classes-shown', Object.keys(shown).sort().join(','));
              root.setAttribute('data-ready', '1');
            }

            rows.addEventListener('click', function (event) {
              var tr = event.target.closest('tr');
              if (!tr) { return; }
              var selected = rows.querySelector('tr.selected');
              if (selected) { selected.classList.remove('selected'); }
              tr.classList.add('selected');
              var file = tr.getAttribute('data-shot');
              shot.hidden = !file;
              if (file) { shot.src = file; }
              caption.textContent = file ? 'The screen at ' + tr.cells[comparing ? 1 : 0].textContent : 'No screenshot before this event.';
              // The tester's voice from this moment (media time = report time + where time 0 is in the file).
              var player = byId('tl-audio'), voice = data.audio && data.audio[Number(tr.getAttribute('data-user'))];
              if (player && voice) {
                if (player.getAttribute('src') !== voice[0]) { player.setAttribute('src', voice[0]); }
                player.currentTime = Math.max(0, Number(tr.getAttribute('data-t')) + voice[1]);
                player.play().catch(function () {});
              }
            });
            more.addEventListener('click', function () { limit += pageSize; render(); });
            classSelect.addEventListener('change', function () { fillTypes(); apply(); });
            typeSelect.addEventListener('change', apply);
            if (userSelect) { userSelect.addEventListener('change', apply); }
            search.addEventListener('input', apply);

            // index.html?class=…&type=…&q=… opens the timeline filtered: links to a moment, and the browser tests.
            var params = new URLSearchParams(window.location.search);
            if (params.get('class')) { classSelect.value = params.get('class'); }
            fillTypes();
            if (params.get('type')) { typeSelect.value = params.get('type'); }
            if (params.get('q')) { search.value = params.get('q'); }
            apply();
          }

          function drawHeatmap(canvas, image) {
            var context = canvas.getContext('2d');
            if (image) { context.drawImage(image, 0, 0, canvas.width, canvas.height); }
            var touches = JSON.parse(canvas.getAttribute('data-touches'));
            var paths = JSON.parse(canvas.getAttribute('data-paths'));
            // Translucent spots add up: red where many fingers went down.
            touches.forEach(function (point) {
              var gradient = context.createRadialGradient(point[0], point[1], 0, point[0], point[1], 18);
              gradient.addColorStop(0, 'rgba(230, 30, 20, 0.55)');
              gradient.addColorStop(1, 'rgba(255, 200, 0, 0)');
              context.fillStyle = gradient;
              context.beginPath();
              context.arc(point[0], point[1], 18, 0, 2 * Math.PI);
              context.fill();
            });
            context.lineWidth = 3;
            context.strokeStyle = 'rgba(40, 90, 220, 0.8)';
            context.fillStyle = 'rgba(40, 90, 220, 0.9)';
            paths.forEach(function (path) {
              context.beginPath();
              path.forEach(function (point, index) { if (index) { context.lineTo(point[0], point[1]); } else { context.moveTo(point[0], point[1]); } });
              context.stroke();
              context.beginPath();
              context.arc(path[0][0], path[0][1], 4, 0, 2 * Math.PI);
              context.fill();
            });
            // Over the page (a web session's, in a frame under the canvas): the canvas is left transparent.
            canvas.setAttribute('data-drawn', image ? '1' : canvas.hasAttribute('data-page') ? 'over-page' : 'without-screenshot');
            canvas.setAttribute('data-touches-drawn', String(touches.length));
            canvas.setAttribute('data-paths-drawn', String(paths.length));
          }

          function loadHeatmap(canvas) {
            if (canvas.getAttribute('data-drawn') !== '0') { return; }
            canvas.setAttribute('data-drawn', 'loading');
            var file = canvas.getAttribute('data-shot');
            if (!file) { drawHeatmap(canvas, null); return; }
            var image = new Image();
            image.onload = function () { drawHeatmap(canvas, image); };
            image.onerror = function () { noteError(); drawHeatmap(canvas, null); };
            image.src = file;
          }

          // Canvases in a closed <details> (the study report's one per participant and view) are drawn when
          // it opens: hundreds of screen-sized canvases at once would cost the browser hundreds of megabytes.
          function setUpHeatmaps() {
            Array.prototype.forEach.call(document.querySelectorAll('canvas[data-shot]'), function (canvas) {
              var closed = canvas.closest('details:not([open])');
              if (!closed) { loadHeatmap(canvas); return; }
              closed.addEventListener('toggle', function () {
                if (closed.open) { Array.prototype.forEach.call(closed.querySelectorAll('canvas[data-shot]'), loadHeatmap); }
              });
            });
          }

          setUpTimeline();
          setUpHeatmaps();
        }());
        """#
}
