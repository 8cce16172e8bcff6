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
