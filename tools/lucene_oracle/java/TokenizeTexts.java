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
      for (String text : all.split("\u0000", -1)) {
        tokenizer.setReader(new StringReader(text));
        tokenizer.reset();
        boolean first = true;
        while (tokenizer.incrementToken()) {
          if (!first) out.write('\t');
          out.write(term.buffer(), 0, term.length());
          first = false;
        }
        tokenizer.end();
        tokenizer.close();
        out.write('\n');
      }
    }
  }
}
