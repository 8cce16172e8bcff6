"""The small Java programs the Anserini oracle compiles against the jar (developer tooling:
:mod:`tools.lucene_oracle.anserini` runs them)."""

# Runs Anserini's default analyzer (DefaultEnglishAnalyzer, what its BM25 indexes use) over
# NUL-separated texts; writes one line of space-separated terms per text.
ANALYZE_JAVA = """\
import io.anserini.analysis.AnalyzerUtils;
import io.anserini.analysis.DefaultEnglishAnalyzer;
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;

public class AnalyzeTexts {
  public static void main(String[] args) throws Exception {
    String all = new String(Files.readAllBytes(Paths.get(args[0])), StandardCharsets.UTF_8);
    DefaultEnglishAnalyzer analyzer = DefaultEnglishAnalyzer.newDefaultInstance();
    try (Writer out = new BufferedWriter(new OutputStreamWriter(
        new FileOutputStream(args[1]), StandardCharsets.UTF_8))) {
      for (String text : all.split("\\u0000", -1)) {
        out.write(String.join(" ", AnalyzerUtils.analyze(analyzer, text)));
        out.write("\\n");
      }
    }
  }
}
"""


# Runs Lucene's StandardTokenizer (the analyzer's first step) over NUL-separated texts; writes
# one line per text, its tokens separated by tabs (no token holds a tab or a line break).
TOKENIZE_JAVA = """\
import org.apache.lucene.analysis.standard.StandardTokenizer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;

public class TokenizeTexts {
  public static void main(String[] args) throws Exception {
    String all = new String(Files.readAllBytes(Paths.get(args[0])), StandardCharsets.UTF_8);
    StandardTokenizer tokenizer = new StandardTokenizer();
    CharTermAttribute term = tokenizer.addAttribute(CharTermAttribute.class);
    try (Writer out = new BufferedWriter(new OutputStreamWriter(
        new FileOutputStream(args[1]), StandardCharsets.UTF_8))) {
      for (String text : all.split("\\u0000", -1)) {
        tokenizer.setReader(new StringReader(text));
        tokenizer.reset();
        boolean first = true;
        while (tokenizer.incrementToken()) {
          if (!first) out.write('\\t');
          out.write(term.buffer(), 0, term.length());
          first = false;
        }
        tokenizer.end();
        tokenizer.close();
        out.write('\\n');
      }
    }
  }
}
"""

# Tokenizes every code point (surrogates aside) in each probe context (a line of hex code
# points, E000 standing for the candidate) and writes, run-length encoded, which behaviour each
# code point shows: "<first code point, hex> <behaviour id>" lines, then "#", then one line per
# behaviour: its id and its token spans (code point offsets) in every context.
PROBE_JAVA = """\
import org.apache.lucene.analysis.standard.StandardTokenizer;
import org.apache.lucene.analysis.tokenattributes.OffsetAttribute;
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;

public class ProbeCodePoints {
  public static void main(String[] args) throws Exception {
    List<int[]> contexts = new ArrayList<>();
    for (String line : Files.readAllLines(Paths.get(args[0]))) {
      if (line.isEmpty()) continue;
      String[] parts = line.trim().split(" ");
      int[] cps = new int[parts.length];
      for (int i = 0; i < parts.length; i++) cps[i] = Integer.parseInt(parts[i], 16);
      contexts.add(cps);
    }
    StandardTokenizer tokenizer = new StandardTokenizer();
    OffsetAttribute offsets = tokenizer.addAttribute(OffsetAttribute.class);
    Map<String, Integer> ids = new LinkedHashMap<>();
    try (PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(
        new FileOutputStream(args[1]), StandardCharsets.UTF_8)))) {
      int previous = -1;
      for (int c = 0; c < 0x110000; c++) {
        if (c >= 0xD800 && c <= 0xDFFF) continue;
        StringBuilder behaviour = new StringBuilder();
        for (int[] context : contexts) {
          StringBuilder text = new StringBuilder();
          for (int x : context) text.appendCodePoint(x == 0xE000 ? c : x);
          String s = text.toString();
          tokenizer.setReader(new StringReader(s));
          tokenizer.reset();
          while (tokenizer.incrementToken()) {
            behaviour.append(s.codePointCount(0, offsets.startOffset())).append('-')
                .append(s.codePointCount(0, offsets.endOffset())).append(',');
          }
          tokenizer.end();
          tokenizer.close();
          behaviour.append('|');
        }
        String key = behaviour.toString();
        Integer id = ids.get(key);
        if (id == null) {
          id = ids.size();
          ids.put(key, id);
        }
        if (id != previous) out.println(Integer.toHexString(c) + " " + id);
        previous = id;
      }
      out.println("#");
      for (Map.Entry<String, Integer> e : ids.entrySet()) {
        out.println(e.getValue() + " " + e.getKey());
      }
    }
  }
}
"""
